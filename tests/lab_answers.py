"""Known-wrong answers and suggested changes for each lab, used by `test_lab_grading.py`.

`PLANTED[floor key][exercise anchor]` is a wrong answer put into that exercise's solution cell,
with the mistake it stands for and a fragment of the message its self-check must give. A mistake
that only a clear measurement can show has `ungraded`: fragments of the lines the check prints
when this machine's run cannot tell it from the right answer ("not graded on this machine: ...",
"not applicable: one core ..."); only then may the check pass it.
`MISTYPED[floor key][exercise anchor]` is an answer of the wrong type (a number written as a
string, a dtype as its name): its check must say which type it expects ("... should be ...").
`CHANGES[floor key][exercise anchor]` lists the parts of the exercise's suggested "Change", one
`Change` per configuration a student is asked to try: `says` quotes the words of the lab's
**Change** prompt that the part carries out, `edits` is text replaced in the lab's code cells,
`answers` the answers a student who made it right would give. Parts that can be tried together
are one `Change`; parts that exclude each other (two values of one variable) are separate ones.
The n-th changed run of a lab applies the n-th part of every exercise that has one.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Wrong:
    mistake: str
    source: str
    message: str
    ungraded: tuple[str, ...] = ()


@dataclass(frozen=True)
class Change:
    says: str
    edits: dict[str, str] = field(default_factory=dict)
    answers: dict[str, str] = field(default_factory=dict)


PLANTED: dict[str, dict[str, Wrong]] = {}
CHANGES: dict[str, dict[str, list[Change]]] = {}
MISTYPED: dict[str, dict[str, Wrong]] = {}

PLANTED["1-program"] = {
    "bytes-per-tensor": Wrong(
        "the guess counts elements, not bytes (issue: MY_GUESS was never compared)",
        "MY_GUESS = 64 * 784\n\ndef predicted_bytes(shape, dtype):\n    return math.prod(shape) * dtype.itemsize\n",
        "torch.randn(64, 784) holds 200,704 bytes, not 50,176",
    ),
    "type-promotion": Wrong(
        "a Python int widens a float16 tensor",
        "PREDICTED = {\n"
        '    "int64 tensor + float32 tensor": torch.float32,\n'
        '    "float16 tensor + float32 tensor": torch.float32,\n'
        '    "float32 tensor + Python float": torch.float32,\n'
        '    "int64 tensor + Python float": torch.float32,\n'
        '    "float16 tensor + Python int": torch.float32,\n'
        "}\n",
        "float16 tensor + Python int: you said torch.float32, it is torch.float16",
    ),
    "numpy-sharing": Wrong(
        "as_tensor shares even when asked for another dtype",
        "SHARES = {\n"
        '    "torch.as_tensor(big)": True,\n'
        '    "torch.as_tensor(big, dtype=torch.float64)": True,\n'
        '    "torch.as_tensor(big.T)": True,\n'
        '    "torch.as_tensor(big[:, ::2])": True,\n'
        '    "torch.as_tensor(big.view(np.int32))": True,\n'
        "}\n",
        "torch.as_tensor(big, dtype=torch.float64): you said True",
    ),
    "line-by-line": Wrong(
        "building the model grows with the batch",
        "GROWS = {\n"
        '    "x = torch.randn(...)": True,\n'
        '    "model = nn.Linear(...)": True,\n'
        '    "loss = cross_entropy(model(x), y)": True,\n'
        '    "loss.backward() (with its forward)": True,\n'
        '    "optimizer.step()": False,\n'
        "}\n",
        "model = nn.Linear(...): you said grows=True",
    ),
}
CHANGES["1-program"] = {
    "bytes-per-tensor": [
        Change(
            "**Change** `DTYPES` and `SHAPE`: add `torch.int8`, `torch.bool`, `torch.complex64`, and try a"
            " three-dimensional `SHAPE` such as `(2, 3, 5)`",
            edits={
                "SHAPE = (64, 784)\nDTYPES = [torch.float32,": "SHAPE = (2, 3, 5)\nDTYPES = [torch.int8, torch.bool, "
                "torch.complex64, torch.float32,"
            },
        )
    ],
    "type-promotion": [
        Change(
            "**Change** `PAIRS`: add an `int8` tensor plus a Python `int`, a `bool` tensor plus a `float16` tensor,"
            " a zero-dimensional `float64` tensor plus a `float32` tensor, and predict each one in `PREDICTED` too",
            edits={
                '"float16 tensor + Python int": (torch.ones(3, dtype=torch.float16), 7),\n}': (
                    '"float16 tensor + Python int": (torch.ones(3, dtype=torch.float16), 7),\n'
                    '    "int8 tensor + Python int": (torch.ones(3, dtype=torch.int8), 7),\n'
                    '    "bool tensor + float16 tensor": '
                    "(torch.ones(3, dtype=torch.bool), torch.ones(3, dtype=torch.float16)),\n"
                    '    "0-dim float64 + float32 tensor": (torch.tensor(1.0, dtype=torch.float64), torch.ones(3)),\n}'
                )
            },
            answers={
                "type-promotion": "PREDICTED = {\n"
                '    "int64 tensor + float32 tensor": torch.float32,\n'
                '    "float16 tensor + float32 tensor": torch.float32,\n'
                '    "float32 tensor + Python float": torch.float32,\n'
                '    "int64 tensor + Python float": torch.float32,\n'
                '    "float16 tensor + Python int": torch.float16,\n'
                '    "int8 tensor + Python int": torch.int8,\n'
                '    "bool tensor + float16 tensor": torch.float16,\n'
                '    "0-dim float64 + float32 tensor": torch.float32,\n'
                "}\n"
            },
        )
    ],
    "numpy-sharing": [
        Change("**Change** `ROWS` to `[10, 1_000]`", edits={"ROWS = [10, 1_000, 100_000]": "ROWS = [10, 1_000]"}),
        Change(
            "then change it to `[10, 1_000, 1_000_000]`",
            edits={"ROWS = [10, 1_000, 100_000]": "ROWS = [10, 1_000, 1_000_000]"},
        ),
    ],
    "line-by-line": [
        Change("**Change** `LARGE` to `1024`", edits={"SMALL, LARGE = 64, 4096": "SMALL, LARGE = 64, 1024"})
    ],
}

PLANTED["2-python"] = {
    "on-disk": Wrong("torch is half Python", 'PYTHON_SHARE = 50\nLARGEST = "libtorch_cpu"\n', "not about 50 %"),
    "python-or-compiled": Wrong(
        "every operator of a compiled class is compiled",
        "PREDICTED_KIND = {\n"
        '    "torch.relu": "compiled",\n'
        '    "torch.nn.functional.relu": "Python",\n'
        '    "torch.Tensor.__add__": "compiled",\n'
        '    "torch.Tensor.__rsub__": "compiled",\n'
        '    "torch.Tensor.__len__": "Python",\n'
        '    "torch.Tensor.item": "compiled",\n'
        "}\n",
        "torch.Tensor.__rsub__: you said compiled, it is Python",
    ),
    "import-cost": Wrong("the second import costs about as much", "OVER_A_THOUSAND = False\n", "more than 1,000 times"),
    "torch-function": Wrong(
        "the mode sees the operators below the call",
        'PREDICTED_CALLS = ["addmm", "log_softmax", "nll_loss", "backward"]\n',
        "the mode recorded ['linear', 'cross_entropy', 'backward']",
    ),
}
CHANGES["2-python"] = {
    "on-disk": [
        Change(
            "**Change** `KINDS` to split out more suffixes (`.pyi` stubs, `.h` headers), and change `TOP` to list"
            " more of the largest files",
            edits={
                '".dylib": "compiled library"}': '".dylib": "compiled library", ".pyi": "stub", ".h": "header"}',
                "TOP = 5": "TOP = 12",
            },
        )
    ],
    "python-or-compiled": [
        Change(
            "**Change** `NAMES`: add `torch.softmax`, `torch.nn.functional.softmax`, `torch.Tensor.__repr__`,"
            " `torch.Tensor.to`, and predict them too",
            edits={
                '"torch.Tensor.item": torch.Tensor.item,\n}': (
                    '"torch.Tensor.item": torch.Tensor.item,\n'
                    '    "torch.softmax": torch.softmax,\n'
                    '    "torch.nn.functional.softmax": torch.nn.functional.softmax,\n'
                    '    "torch.Tensor.__repr__": torch.Tensor.__repr__,\n'
                    '    "torch.Tensor.to": torch.Tensor.to,\n}'
                )
            },
            answers={
                "python-or-compiled": "PREDICTED_KIND = {\n"
                '    "torch.relu": "compiled",\n'
                '    "torch.nn.functional.relu": "Python",\n'
                '    "torch.Tensor.__add__": "compiled",\n'
                '    "torch.Tensor.__rsub__": "Python",\n'
                '    "torch.Tensor.__len__": "Python",\n'
                '    "torch.Tensor.item": "compiled",\n'
                '    "torch.softmax": "compiled",\n'
                '    "torch.nn.functional.softmax": "Python",\n'
                '    "torch.Tensor.__repr__": "Python",\n'
                '    "torch.Tensor.to": "compiled",\n'
                "}\n"
            },
        )
    ],
    "import-cost": [
        Change(
            '**Change** `MODULE` to `"json"`, predict again',
            edits={'MODULE = "torch"': 'MODULE = "json"'},
            answers={"import-cost": "OVER_A_THOUSAND = True\n"},  # Python's start-up alone: about 1e5 times
        ),
        Change(
            'with `MODULE` back to `"torch"`, set `FLAGS = ["-X", "importtime"]`',
            edits={"FLAGS = []": 'FLAGS = ["-X", "importtime"]'},
        ),
    ],
    "torch-function": [
        Change(
            "**Change** the loss to"
            " `torch.nn.functional.mse_loss(model(x), torch.nn.functional.one_hot(y, 10).float())`"
            " and predict again",
            edits={
                "loss = torch.nn.functional.cross_entropy(model(x), y)\n    loss.backward()": (
                    "loss = torch.nn.functional.mse_loss(model(x), torch.nn.functional.one_hot(y, 10).float())\n"
                    "    loss.backward()"
                )
            },
            answers={"torch-function": 'PREDICTED_CALLS = ["linear", "one_hot", "float", "mse_loss", "backward"]\n'},
        ),
        Change(
            "Then also add `optimizer.step()` inside the `with` block, after `loss.backward()`, and predict again:"
            " `step` is not a torch function, so what does the mode see of it?",
            edits={
                "loss = torch.nn.functional.cross_entropy(model(x), y)\n    loss.backward()": (
                    "loss = torch.nn.functional.mse_loss(model(x), torch.nn.functional.one_hot(y, 10).float())\n"
                    "    loss.backward()\n    optimizer.step()"
                )
            },
            # step is a Python method: the mode sees one add_ per parameter (weight and bias).
            answers={
                "torch-function": "PREDICTED_CALLS = "
                '["linear", "one_hot", "float", "mse_loss", "backward", "add_", "add_"]\n'
            },
        ),
    ],
}

PLANTED["3-boundary"] = {
    "rejected-call": Wrong(
        "a refused call is free: no kernel ran",
        'REFUSED_COST = "under 2"\n',
        "2 to 100, not under 2",
        ungraded=("not graded on this machine",),
    ),
    "what-the-floor-buys": Wrong(
        "a torch call is a Python call",
        "PREDICTED_CALLS = 1\n",
        "not about 1",
        ungraded=("not graded on this machine",),
    ),
    "argument-parsing": Wrong(
        "the parser complains about alpha",
        'PREDICTED_WORD = {\'torch.add(a1, "two")\': "alpha"}\n',
        "something else than 'alpha'",
    ),
    "batch-the-crossings": Wrong(
        "batching buys nothing",
        "MUCH_FASTER = False\n",
        "more than 5 times as fast",
        ungraded=("not graded on this machine",),
    ),
}
CHANGES["3-boundary"] = {
    "rejected-call": [
        Change(
            "**Change** the call in `rejected` to one that the parser accepts and the kernel refuses,"
            " `torch.add(a2, a3)` (shapes 2 and 3 do not broadcast), and predict again",
            edits={
                '        torch.add(a1, "two")  # the argument parser refuses it': (
                    "        torch.add(a2, a3)  # the kernel refuses it"
                )
            },
            # the kernel's shape check throws as the parser does: no cheaper without the signature list
            answers={"rejected-call": 'REFUSED_COST = "2 to 100"\n'},
        )
    ],
    "what-the-floor-buys": [
        Change(
            "**Change**: add the operator form `a1 + b1` and the method form `a1.add(b1)` to `crossing`. Do"
            " they cost the same as `torch.add(a1, b1)`?",
            edits={
                '"torch.add, 1 element": best_time(lambda: torch.add(a1, b1)),\n    }': (
                    '"torch.add, 1 element": best_time(lambda: torch.add(a1, b1)),\n'
                    '        "a1 + b1": best_time(lambda: a1 + b1),\n'
                    '        "a1.add(b1)": best_time(lambda: a1.add(b1)),\n    }'
                )
            },
        )
    ],
    "argument-parsing": [
        Change(
            "**Change** `WRONG_CALLS`: add `torch.add(a1, [1, 2])` (a list), `torch.add(a1, b1, alpha=None)` and"
            " `torch.add(a1, b1, scale=2)` (a keyword that does not exist), predict the word each message names",
            edits={
                '    \'torch.add(a1, "two")\': lambda: torch.add(a1, "two"),\n}': (
                    '    \'torch.add(a1, "two")\': lambda: torch.add(a1, "two"),\n'
                    '    "torch.add(a1, [1, 2])": lambda: torch.add(a1, [1, 2]),\n'
                    '    "torch.add(a1, b1, alpha=None)": lambda: torch.add(a1, b1, alpha=None),\n'
                    '    "torch.add(a1, b1, scale=2)": lambda: torch.add(a1, b1, scale=2),\n}'
                )
            },
            answers={
                "argument-parsing": "PREDICTED_WORD = {\n"
                '    \'torch.add(a1, "two")\': "other",\n'
                '    "torch.add(a1, [1, 2])": "other",\n'
                '    "torch.add(a1, b1, alpha=None)": "alpha",\n'
                '    "torch.add(a1, b1, scale=2)": "scale",\n'
                "}\n"
            },
        )
    ],
    "batch-the-crossings": [
        Change(
            "**Change** `PIECES` and `PIECE_SIZE` to 100 pieces of 100 000 elements and predict again",
            edits={"PIECES, PIECE_SIZE = 1000, 100": "PIECES, PIECE_SIZE = 100, 100_000"},
            answers={"batch-the-crossings": "MUCH_FASTER = False\n"},
        )
    ],
}

PLANTED["4-dispatcher"] = {
    "dispatch-keys": Wrong(
        "every dtype has its own key",
        'DIFFERS = {"sparse": True, "bool": False, "complex": True, "complex, conj()": True}\n',
        "complex: you said differs=True",
    ),
    "op-log": Wrong(
        "one operator per Python call", 'PREDICTED_OPS = {"forward": 2, "backward": 2, "step": 1}\n', "not about 2"
    ),
    "schemas": Wrong(
        "out= does not count as a mutation",
        'MUTATES = {"aten.addmm.default": False, "aten.add.Tensor": False, "aten.add_.Tensor": True, '
        '"aten.add.out": False}\nPREDICTED_OVERLOADS = 10\n',
        "aten.add.out: you said mutates=False",
    ),
    "meta-device": Wrong(
        "the bias forgotten",
        "def predicted_parameter_bytes(features):\n    return 4 * features * features\n",
        "not 10,000,000,000",
    ),
    "custom-op": Wrong(
        "a meta tensor runs the kernel, on no data",
        "RUNS = {\n"
        '    "a CPU tensor": {"kernel"},\n'
        '    "a meta tensor": {"kernel"},\n'
        '    "forward and backward": {"kernel", "backward"},\n'
        '    "compiled, first call": {"fake", "kernel"},\n'
        '    "compiled, second call": {"kernel"},\n'
        "}\n",
        "a meta tensor: you said ['kernel'], but ['fake'] ran",
    ),
}
CHANGES["4-dispatcher"] = {
    "dispatch-keys": [
        Change(
            "**Change** `TENSORS`: add `torch.ones(3, dtype=torch.cfloat).conj().imag` and"
            " `torch.ones(3, dtype=torch.float16)`, and predict them too",
            edits={
                '    "complex, conj()": torch.ones(3, dtype=torch.cfloat).conj(),\n}': (
                    '    "complex, conj()": torch.ones(3, dtype=torch.cfloat).conj(),\n'
                    '    "conj().imag": torch.ones(3, dtype=torch.cfloat).conj().imag,\n'
                    '    "float16": torch.ones(3, dtype=torch.float16),\n}'
                )
            },
            answers={
                "dispatch-keys": 'DIFFERS = {"sparse": True, "bool": False, "complex": False,'
                ' "complex, conj()": True, "conj().imag": True, "float16": False}\n'
            },
        )
    ],
    "op-log": [
        Change(
            "**Change** `OPTIMIZER` to `torch.optim.Adam` and predict the step again",
            edits={"OPTIMIZER = torch.optim.SGD": "OPTIMIZER = torch.optim.Adam"},
            answers={"op-log": 'PREDICTED_OPS = {"forward": 4, "backward": 10, "step": 20}\n'},
        )
    ],
    "schemas": [
        Change(
            "**Change** `OPS`: add `torch.ops.aten.view.default` (a view: look for the (a) in its schema) and"
            " predict it too",
            edits={"torch.ops.aten.add.out]": "torch.ops.aten.add.out, torch.ops.aten.view.default]"},
            answers={
                "schemas": 'MUTATES = {"aten.addmm.default": False, "aten.add.Tensor": False, "aten.add_.Tensor": True,'
                ' "aten.add.out": True, "aten.view.default": False}\nPREDICTED_OVERLOADS = 10\n'
            },
        )
    ],
    "meta-device": [
        Change("**Change** `FEATURES` to `200_000`", edits={"FEATURES = 50_000": "FEATURES = 200_000"}),
    ],
    "custom-op": [
        Change(
            "**Change** `SECOND_SHAPE` to `(5, 7)` (the second compiled call gets an input of a new shape) and"
            " predict that call again",
            edits={"SECOND_SHAPE = (3, 4)": "SECOND_SHAPE = (5, 7)"},
            answers={
                "custom-op": "RUNS = {\n"
                '    "a CPU tensor": {"kernel"},\n'
                '    "a meta tensor": {"fake"},\n'
                '    "forward and backward": {"kernel", "backward"},\n'
                '    "compiled, first call": {"fake", "kernel"},\n'
                '    "compiled, second call": {"fake", "kernel"},\n'
                "}\n"
            },
        )
    ],
}

PLANTED["5-autograd"] = {
    "walk-the-graph": Wrong(
        "one leaf per use of a parameter",
        'PREDICTED_LEAVES = {"one layer": 2, "a square layer used twice": 6, "first layer frozen": 2}\n',
        "a square layer used twice: the graph has 4 AccumulateGrad leaves, not 6",
    ),
    "saved-tensors": Wrong(
        "the hidden layer saved before and after the ReLU (the old solution's claim)",
        "def predicted_per_example(hidden):\n"
        "    return 4 * 784 + 4 * 10 + 8 + (0 if hidden is None else 2 * 4 * hidden)\n",
        "hidden=256: each example saves 4,208 bytes, your formula gives 5232",
    ),
    "micro-batches": Wrong("backward replaces .grad", "PREDICTED_MULTIPLE = 1\n", "not 1"),
    "no-grad": Wrong(
        "only the input is saved",
        "def predicted_saved(batch, hidden):\n"
        '    return {"recording": 4 * batch * 784, "no_grad": 0, "inference_mode": 0}\n',
        "recording: ",
    ),
    "version-counters": Wrong(
        "a view keeps a counter of its own",
        'PREDICTED_VERSIONS = {"a": 1, "b": 0, "c": 1, "d": 3}\nBACKWARD_RAISES = True\n',
        "b: its version is 1, not 0",
    ),
}
CHANGES["5-autograd"] = {
    "walk-the-graph": [
        Change(
            "**Change** `X_REQUIRES_GRAD` to `True` (the input asks for a gradient too, as it does when you compute a"
            " saliency map) and predict again",
            edits={"X_REQUIRES_GRAD = False": "X_REQUIRES_GRAD = True"},
            answers={
                "walk-the-graph": 'PREDICTED_LEAVES = {"one layer": 3, "a square layer used twice": 5, '
                '"first layer frozen": 3}\n'
            },
        )
    ],
    "saved-tensors": [
        Change(
            "**Change** `HIDDENS` to add `128` and `1024`",
            edits={"HIDDENS = [None, 256]": "HIDDENS = [None, 256, 128, 1024]"},
        )
    ],
    "micro-batches": [
        Change(
            "**Change** `SCALE_LOSS` to `True` (each micro-batch's loss is divided by `MICRO_BATCHES` before its"
            " backward) and predict again",
            edits={"SCALE_LOSS = False": "SCALE_LOSS = True"},
            answers={"micro-batches": "PREDICTED_MULTIPLE = 1\n"},
        ),
        Change(
            "with `SCALE_LOSS` back to `False`, change `MICRO_BATCHES` to `2` and predict again",
            edits={"MICRO_BATCHES = 4": "MICRO_BATCHES = 2"},
            answers={"micro-batches": "PREDICTED_MULTIPLE = 2\n"},
        ),
    ],
    "no-grad": [
        Change("**Change** `BATCH` and `HIDDEN`", edits={"BATCH, HIDDEN = 256, 128": "BATCH, HIDDEN = 100, 40"}),
    ],
    "version-counters": [
        Change(
            "**Change** the line that makes `c` to `c = a.data` and predict again",
            edits={"c = a.detach()": "c = a.data"},
            answers={
                "version-counters": 'PREDICTED_VERSIONS = {"a": 0, "b": 0, "c": 1, "d": 3}\nBACKWARD_RAISES = False\n'
            },
        )
    ],
}

PLANTED["6-kernels"] = {
    "matmul-gflops": Wrong(
        "the x2 dropped from the FLOP count",
        "def matmul_flops(n):\n    return n**3\n",
        "n = 16: your formula gives 4,096, PyTorch counts 8,192",
    ),
    "add-bandwidth": Wrong(
        "one array counted instead of three", "def add_bytes(n):\n    return 4 * n\n", "your formula gives 256 bytes"
    ),
    "roofline": Wrong(
        "the ridge as bandwidth over compute",
        'ridge = memory_gbps / peak_gflops\nBOUND = {"add": "memory", "matmul": "compute"}\n',
        "the roofs meet at",
    ),
    "dtype-kernels": Wrong(
        "a multiply is a multiply, whatever the dtype: only the bytes differ",
        'FASTER = torch.float32\nGAP = "small"\n',
        "a large gap, not a small one",
        ungraded=("too close to 2 times to call the gap",),
    ),
}
CHANGES["6-kernels"] = {
    "matmul-gflops": [
        Change(
            "**Change** `MATMUL_SIZES` to include `1024` (and `2048` if your machine is patient)",
            edits={
                "MATMUL_SIZES = [16, 32, 64, 128, 256, 512]": "MATMUL_SIZES = [16, 32, 64, 128, 256, 512, 1024, 2048]"
            },
        )
    ],
    "add-bandwidth": [
        Change(
            "**Change** `ADD_SIZES` to find where the rate drops",
            edits={"ADD_SIZES = [2**k for k in range(6, 23, 2)]": "ADD_SIZES = [2**k for k in range(6, 24)]"},
        ),
        # Sizes that start above the caches' smallest level: no tiny add to show the fixed cost (issue).
        Change(
            "**Change** `ADD_SIZES` to find where the rate drops",
            edits={"ADD_SIZES = [2**k for k in range(6, 23, 2)]": "ADD_SIZES = [2**k for k in range(14, 25)]"},
        ),
    ],
    "roofline": [
        Change(
            "**Change** `N` to `8` and predict again",
            edits={"N = 512\nROUNDS": "N = 8\nROUNDS"},
            answers={"roofline": 'ridge = peak_gflops / memory_gbps\nBOUND = {"add": "memory", "matmul": "memory"}\n'},
        )
    ],
    "dtype-kernels": [
        Change(
            "**Change** `DTYPES` to add `torch.int32` and `torch.int8`",
            edits={
                "DTYPES = [torch.float32, torch.int64]": (
                    "DTYPES = [torch.float32, torch.int64, torch.int32, torch.int8]"
                )
            },
        )
    ],
}

PLANTED["7-memory"] = {
    "strides": Wrong(
        "a transpose copies into a new row-major layout",
        'PREDICTED_STRIDES = {"base": (6, 1), "base.t()": (4, 1), "base[1:, ::2]": (6, 2), "base[2]": (1,)}\n',
        "base.t(): the stride is (1, 6), not (4, 1)",
    ),
    "view-vs-copy": Wrong(
        "flatten never copies",
        'IS_VIEW = {"x.diagonal()": True, "x.flatten()": True, "x.t().flatten()": True, "x[x > 0]": False}\n',
        "x.t().flatten(): you said view=True",
    ),
    "contiguous": Wrong(
        "reshape always copies",
        'VIEW_FAILS = True\nRESHAPE_SHARES = {"x.reshape(-1)": False, "x.t().reshape(-1)": False}\n',
        "x.reshape(-1): you said shares=False",
    ),
    "training-step-memory": Wrong(
        "one Adam moment instead of two (issue)",
        "def predicted_step_bytes(batch, hidden):\n"
        "    n_params = 784 * hidden + hidden + hidden * 10 + 10\n"
        "    return {\n"
        '        "parameters": 4 * n_params,\n'
        '        "gradients": 4 * n_params,\n'
        '        "optimizer state": 4 * n_params + 4 * 4,\n'
        '        "activations": 4 * batch * (784 + hidden + 10) + 8 * batch + 4,\n'
        "    }\n",
        "optimizer state: the step holds",
    ),
}
CHANGES["7-memory"] = {
    "strides": [
        Change(
            "**Change** `VIEWS`: add `base[::2, 1::3]`, `base.t()[1:]` and `base.unsqueeze(0).expand(3, 4, 6)`, and"
            " predict them too",
            edits={
                '"base[2]": base[2],\n}': (
                    '"base[2]": base[2],\n    "base[::2, 1::3]": base[::2, 1::3],\n    "base.t()[1:]": base.t()[1:],\n'
                    '    "expand": base.unsqueeze(0).expand(3, 4, 6),\n}'
                )
            },
            answers={
                "strides": 'PREDICTED_STRIDES = {"base": (6, 1), "base.t()": (1, 6), "base[1:, ::2]": (6, 2), '
                '"base[2]": (1,),'
                ' "base[::2, 1::3]": (12, 3), "base.t()[1:]": (1, 6), "expand": (0, 6, 1)}\n'
            },
        )
    ],
    "view-vs-copy": [
        Change(
            "**Change** `OPS`: add `x[::2].flatten()` and `x.unsqueeze(0).expand(4, -1, -1)`, and predict them too",
            edits={
                '    "x[x > 0]": lambda x: x[x > 0],\n}': (
                    '    "x[x > 0]": lambda x: x[x > 0],\n'
                    '    "x[::2].flatten()": lambda x: x[::2].flatten(),\n'
                    '    "x.unsqueeze(0).expand(4, -1, -1)": lambda x: x.unsqueeze(0).expand(4, -1, -1),\n}'
                )
            },
            answers={
                "view-vs-copy": 'IS_VIEW = {"x.diagonal()": True, "x.flatten()": True, "x.t().flatten()": False, '
                '"x[x > 0]": False, "x[::2].flatten()": False, "x.unsqueeze(0).expand(4, -1, -1)": True}\n'
            },
        )
    ],
    "contiguous": [
        Change(
            "**Change** `SHAPE` to `(4, 1)` and predict again",
            edits={"SHAPE = (4, 6)": "SHAPE = (4, 1)"},
            answers={
                "contiguous": "VIEW_FAILS = False\n"
                'RESHAPE_SHARES = {"x.reshape(-1)": True, "x.t().reshape(-1)": True}\n'
            },
        )
    ],
    "training-step-memory": [
        Change("**Change** `BATCH` and `HIDDEN`", edits={"BATCH, HIDDEN = 64, 256": "BATCH, HIDDEN = 200, 32"}),
    ],
}

# More known-wrong answers from the issue, each planted alone in its own run.
PLANTED_ALONE: list[tuple[str, str, Wrong]] = [
    (
        "6-kernels",
        "roofline",
        # The run measured for it stands in the answer cell: half a core, and the matmul's intensity
        # (85.3 at N = 512) 3.6 times the ridge, as on the instructor's busy runs, which did not grade it
        # (issue 59: a half share can move the ridge 2 times, the check allowed 4).
        Wrong(
            "a matmul of 512 is memory-bound, on a run at half a core",
            "roof_core = CoreShare(cpu=0.5, wall=1.0)\n"
            "peak_gflops, memory_gbps = 512 / 6 / 3.6, 1.0\n"
            "ridge = peak_gflops / memory_gbps\n"
            'BOUND = {"add": "memory", "matmul": "memory"}\n',
            "matmul: intensity 85.33 is above the ridge",
        ),
    ),
    (
        "4-dispatcher",
        "custom-op",
        Wrong(
            "torch.compile traces again on every call",
            "RUNS = {\n"
            '    "a CPU tensor": {"kernel"},\n'
            '    "a meta tensor": {"fake"},\n'
            '    "forward and backward": {"kernel", "backward"},\n'
            '    "compiled, first call": {"fake", "kernel"},\n'
            '    "compiled, second call": {"fake", "kernel"},\n'
            "}\n",
            "compiled, second call: you said ['fake', 'kernel'], but ['kernel'] ran",
        ),
    ),
    (
        "5-autograd",
        "version-counters",
        Wrong(
            "detach() has a counter of its own, so backward runs",
            'PREDICTED_VERSIONS = {"a": 0, "b": 0, "c": 1, "d": 3}\nBACKWARD_RAISES = False\n',
            "a: its version is 1, not 0",
        ),
    ),
    (
        "3-boundary",
        "rejected-call",
        Wrong(
            "an exception costs orders of magnitude more than a call",
            'REFUSED_COST = "over 100"\n',
            "2 to 100, not over 100",
            ungraded=("not graded on this machine",),
        ),
    ),
    (
        "7-memory",
        "training-step-memory",
        Wrong(
            "the input alone as the activations (issue)",
            "def predicted_step_bytes(batch, hidden):\n"
            "    n_params = 784 * hidden + hidden + hidden * 10 + 10\n"
            '    return {"parameters": 4 * n_params, "gradients": 4 * n_params,\n'
            '            "optimizer state": 2 * 4 * n_params + 4 * 4, "activations": 4 * batch * 784}\n',
            "activations: the step holds",
        ),
    ),
    (
        "7-memory",
        "training-step-memory",
        Wrong(
            "absurd values (issue: 0 and -5 passed)",
            "def predicted_step_bytes(batch, hidden):\n"
            "    n_params = 784 * hidden + hidden + hidden * 10 + 10\n"
            '    return {"parameters": 4 * n_params, "gradients": 4 * n_params,\n'
            '            "optimizer state": 0, "activations": -5}\n',
            "optimizer state: the step holds",
        ),
    ),
]

PLANTED["8-chip"] = {
    "launch-vs-completion": Wrong(
        "the call returns when the work is done",
        "LAUNCH_BOUND = True\n",
        "less than a tenth",
        ungraded=("not graded on this machine",),
    ),
    "wall-vs-cpu": Wrong(
        "a sleeping process keeps its CPU busy",
        'PREDICTED_CPU_PER_WALL = {"sleep": 1, "matmul, at most": DEFAULT_THREADS}\n',
        "not 1",
    ),
    "bandwidth-vs-size": Wrong(
        "only the bytes read counted (issue)",
        "def copy_bytes(buffer_bytes):\n    return buffer_bytes\n",
        "4 KiB: your formula gives 4,096 bytes; the copy reads and writes 8,192",
    ),
    "threads": Wrong(
        "more threads than cores, more speed: no real bound",
        "def max_speedup(threads):\n    return 2 * threads\n",
        "looser than",
    ),
}
CHANGES["8-chip"] = {
    "launch-vs-completion": [
        Change(
            "**Change** `N` to `16`, so that each multiply is shorter than a submission, and predict again",
            edits={"N, CALLS = 512, 50": "N, CALLS = 16, 50"},
            answers={"launch-vs-completion": "LAUNCH_BOUND = True\n"},
        )
    ],
    "wall-vs-cpu": [
        Change(
            "**Change** `MATMUL_THREADS` to `1` and predict again",
            edits={"MATMUL_THREADS = DEFAULT_THREADS": "MATMUL_THREADS = 1"},
            answers={"wall-vs-cpu": 'PREDICTED_CPU_PER_WALL = {"sleep": 0, "matmul, at most": 1}\n'},
        )
    ],
    "bandwidth-vs-size": [
        Change(
            "**Change** `SIZES_KIB` to find the steps in the curve",
            edits={"SIZES_KIB = [4, 32, 256, 2048, 16384, 65536]": "SIZES_KIB = [4, 16, 64, 512, 1024, 8192, 32768]"},
        ),
        # From 512 KiB up: no tiny copy to show the fixed cost (issue).
        Change(
            "**Change** `SIZES_KIB` to find the steps in the curve",
            edits={"SIZES_KIB = [4, 32, 256, 2048, 16384, 65536]": "SIZES_KIB = [512, 1024, 2048, 8192, 65536]"},
        ),
    ],
    "threads": [
        Change(
            '**Change** `N` to `512`, add an op to `OPS` such as `"exp": lambda: torch.exp(v, out=u)` (more arithmetic'
            " per byte than the add), and set `BUSY = True`",
            edits={
                "N = 384\nBUSY = False": "N = 512\nBUSY = True",
                '"add": lambda: torch.add(v, w, out=u)}': (
                    '"add": lambda: torch.add(v, w, out=u), "exp": lambda: torch.exp(v, out=u)}'
                ),
            },
        )
    ],
}

# The mistakes that only a clear measurement shows: on a run that cannot show them, the check must
# say why it does not grade them (issue: passed as right on two loaded cores).
PLANTED_ALONE += [
    (
        "8-chip",
        "wall-vs-cpu",
        Wrong(
            "a sleep that gives CPU time back (issue 59: within 0.2 of 0, a negative ratio passed)",
            'PREDICTED_CPU_PER_WALL = {"sleep": -0.1, "matmul, at most": DEFAULT_THREADS}\n',
            "CPU time / wall time is 0 or more",
        ),
    ),
    (
        "8-chip",
        "wall-vs-cpu",
        Wrong(
            "one thread's CPU time for many threads",
            'PREDICTED_CPU_PER_WALL = {"sleep": 0, "matmul, at most": 1}\n',
            "beyond your bound of 1",
            ungraded=("not graded on this machine: the matmuls used only", "not applicable: one core"),
        ),
    ),
    (
        "8-chip",
        "threads",
        Wrong(
            "threads buy nothing",
            "def max_speedup(threads):\n    return 1\n",
            "beyond your bound of 1",
            ungraded=("not graded on this machine: the matmul sped up too little", "not applicable: one core"),
        ),
    ),
    (
        "8-chip",
        "threads",
        Wrong(
            "threads help by the square root of their number",
            "def max_speedup(threads):\n    return threads**0.5\n",
            "beyond your bound of",
            ungraded=("not graded on this machine: the matmul sped up too little", "not applicable: one core"),
        ),
    ),
    (
        "2-python",
        "on-disk",
        Wrong("an empty name, part of every name (issue)", 'PYTHON_SHARE = 5\nLARGEST = ""\n', "LARGEST is empty"),
    ),
    (
        "2-python",
        "on-disk",
        Wrong("a part that every library's name has", 'PYTHON_SHARE = 5\nLARGEST = "lib"\n', "write its whole name"),
    ),
    (
        "2-python",
        "on-disk",
        Wrong(
            "a letter of the largest name that the second largest lacks (issue 59)",
            'PYTHON_SHARE = 5\nLARGEST = "u"\n',
            "write its whole name",
        ),
    ),
]

MISTYPED["1-program"] = {
    "bytes-per-tensor": Wrong(
        "the guess written as a string",
        'MY_GUESS = "200704"\n\ndef predicted_bytes(shape, dtype):\n    return math.prod(shape) * dtype.itemsize\n',
        "MY_GUESS should be a number of bytes (an int such as 1024), not the string '200704'",
    ),
    "type-promotion": Wrong(
        "dtypes written as their names (issue: 'you said float16, it is torch.float16')",
        "PREDICTED = {\n"
        '    "int64 tensor + float32 tensor": "float32",\n'
        '    "float16 tensor + float32 tensor": "float32",\n'
        '    "float32 tensor + Python float": "float32",\n'
        '    "int64 tensor + Python float": "float32",\n'
        '    "float16 tensor + Python int": "float16",\n'
        "}\n",
        "PREDICTED['int64 tensor + float32 tensor'] should be a dtype such as torch.float32 (written without quotes),"
        " not the string 'float32'",
    ),
    "numpy-sharing": Wrong(
        "True and False written as strings",
        "SHARES = {\n"
        '    "torch.as_tensor(big)": "True",\n'
        '    "torch.as_tensor(big, dtype=torch.float64)": "False",\n'
        '    "torch.as_tensor(big.T)": "True",\n'
        '    "torch.as_tensor(big[:, ::2])": "True",\n'
        '    "torch.as_tensor(big.view(np.int32))": "True",\n'
        "}\n",
        "SHARES['torch.as_tensor(big)'] should be True or False (without quotes), not the string 'True'",
    ),
    "line-by-line": Wrong(
        "yes and no for True and False",
        "GROWS = {\n"
        '    "x = torch.randn(...)": "yes",\n'
        '    "model = nn.Linear(...)": "no",\n'
        '    "loss = cross_entropy(model(x), y)": "yes",\n'
        '    "loss.backward() (with its forward)": "yes",\n'
        '    "optimizer.step()": "no",\n'
        "}\n",
        "GROWS['x = torch.randn(...)'] should be True or False (without quotes), not the string 'yes'",
    ),
}
MISTYPED["2-python"] = {
    "on-disk": Wrong(
        "the percent sign kept",
        'PYTHON_SHARE = "5 %"\nLARGEST = "torch_cpu"\n',
        "PYTHON_SHARE should be a number of percent",
    ),
    "python-or-compiled": Wrong(
        "C++ for compiled",
        "PREDICTED_KIND = {\n"
        '    "torch.relu": "C++",\n'
        '    "torch.nn.functional.relu": "Python",\n'
        '    "torch.Tensor.__add__": "C++",\n'
        '    "torch.Tensor.__rsub__": "Python",\n'
        '    "torch.Tensor.__len__": "Python",\n'
        '    "torch.Tensor.item": "C++",\n'
        "}\n",
        "PREDICTED_KIND['torch.relu'] should be \"Python\" or \"compiled\", not 'C++'",
    ),
    "import-cost": Wrong("yes for True", 'OVER_A_THOUSAND = "yes"\n', "OVER_A_THOUSAND should be True or False"),
    "torch-function": Wrong(
        "the names in one string",
        'PREDICTED_CALLS = "linear, cross_entropy, backward"\n',
        "PREDICTED_CALLS should be a list of strings",
    ),
}
MISTYPED["3-boundary"] = {
    "what-the-floor-buys": Wrong(
        "the count as a string", 'PREDICTED_CALLS = "30"\n', "PREDICTED_CALLS should be a number"
    ),
    "argument-parsing": Wrong(
        "the position for the name",
        "PREDICTED_WORD = {'torch.add(a1, \"two\")': 2}\n",
        "should be a string, an argument's name",
    ),
    "rejected-call": Wrong(
        "the count as a number", "REFUSED_COST = 10\n", 'REFUSED_COST should be the string "under 2"'
    ),
    "batch-the-crossings": Wrong("yes for True", 'MUCH_FASTER = "yes"\n', "MUCH_FASTER should be True or False"),
}
MISTYPED["4-dispatcher"] = {
    "dispatch-keys": Wrong(
        "True and False written as strings",
        'DIFFERS = {"sparse": "True", "bool": "False", "complex": "False", "complex, conj()": "True"}\n',
        "DIFFERS['sparse'] should be True or False",
    ),
    "op-log": Wrong(
        "the counts as strings",
        'PREDICTED_OPS = {"forward": "4", "backward": "9", "step": "4"}\n',
        "PREDICTED_OPS['forward'] should be a number of operators",
    ),
    "schemas": Wrong(
        "0 and 1 for False and True",
        'MUTATES = {"aten.addmm.default": 0, "aten.add.Tensor": 0, "aten.add_.Tensor": 1, "aten.add.out": 1}\n'
        "PREDICTED_OVERLOADS = 10\n",
        "MUTATES['aten.addmm.default'] should be True or False (without quotes), not the int 0",
    ),
    "meta-device": Wrong(
        "the bytes written out as text",
        'def predicted_parameter_bytes(features):\n    return f"{4 * (features * features + features):,} bytes"\n',
        "predicted_parameter_bytes(50000) should be a number of bytes",
    ),
    "custom-op": Wrong(
        "the names written as one string, not a set",
        "RUNS = {\n"
        '    "a CPU tensor": "kernel",\n'
        '    "a meta tensor": "fake",\n'
        '    "forward and backward": "kernel, backward",\n'
        '    "compiled, first call": "fake, kernel",\n'
        '    "compiled, second call": "kernel",\n'
        "}\n",
        "RUNS['a CPU tensor'] should be a set of names",
    ),
}
MISTYPED["5-autograd"] = {
    "walk-the-graph": Wrong(
        "the counts as strings",
        'PREDICTED_LEAVES = {"one layer": "2", "a square layer used twice": "4", "first layer frozen": "2"}\n',
        "PREDICTED_LEAVES['one layer'] should be a number of leaves",
    ),
    "saved-tensors": Wrong(
        "the formula written as text",
        'def predicted_per_example(hidden):\n    return "4 * 784 + 4 * 10 + 8"\n',
        "predicted_per_example(None) should be a number of bytes",
    ),
    "micro-batches": Wrong(
        "the ratio as a string", 'PREDICTED_MULTIPLE = "4"\n', "PREDICTED_MULTIPLE should be a number"
    ),
    "no-grad": Wrong(
        "one total instead of a dict by mode",
        "def predicted_saved(batch, hidden):\n    return batch * (4 * (784 + hidden + 10) + 8) + 4 * 10 * hidden + 4\n",
        "predicted_saved(256, 128) should be a dict of bytes by mode",
    ),
    "version-counters": Wrong(
        "the answer to whether it raises as a string",
        'PREDICTED_VERSIONS = {"a": 1, "b": 1, "c": 1, "d": 3}\nBACKWARD_RAISES = "yes"\n',
        "BACKWARD_RAISES should be True or False",
    ),
}
MISTYPED["6-kernels"] = {
    "matmul-gflops": Wrong(
        "the formula written as text",
        'def matmul_flops(n):\n    return "2n^3"\n',
        "matmul_flops(16) should be a number",
    ),
    "add-bandwidth": Wrong(
        "the bytes with their unit",
        'def add_bytes(n):\n    return f"{12 * n} bytes"\n',
        "add_bytes(64) should be a number of bytes",
    ),
    "roofline": Wrong(
        "the ridge formatted as text",
        'ridge = f"{peak_gflops / memory_gbps:.1f}"\nBOUND = {"add": "memory", "matmul": "compute"}\n',
        "ridge should be a number",
    ),
    "dtype-kernels": Wrong(
        "the dtype written as its name",
        'FASTER = "float32"\nGAP = "large"\n',
        "FASTER should be a dtype, torch.float32 or torch.int64 (without quotes), not the string 'float32'",
    ),
}
MISTYPED["7-memory"] = {
    "strides": Wrong(
        "a one-dimensional stride as a bare number",
        'PREDICTED_STRIDES = {"base": (6, 1), "base.t()": (1, 6), "base[1:, ::2]": (6, 2), "base[2]": 1}\n',
        "PREDICTED_STRIDES['base[2]'] should be a tuple of ints",
    ),
    "view-vs-copy": Wrong(
        "True and False written as strings",
        'IS_VIEW = {"x.diagonal()": "True", "x.flatten()": "True", "x.t().flatten()": "False", "x[x > 0]": "False"}\n',
        "IS_VIEW['x.diagonal()'] should be True or False",
    ),
    "contiguous": Wrong(
        "yes for True",
        'VIEW_FAILS = "yes"\nRESHAPE_SHARES = {"x.reshape(-1)": True, "x.t().reshape(-1)": False}\n',
        "VIEW_FAILS should be True or False (without quotes), not the string 'yes'",
    ),
    "training-step-memory": Wrong(
        "the formulas written as text",
        "def predicted_step_bytes(batch, hidden):\n"
        "    n_params = 784 * hidden + hidden + hidden * 10 + 10\n"
        '    return {"parameters": 4 * n_params, "gradients": 4 * n_params,\n'
        '            "optimizer state": "2 * 4 * n_params + 16", "activations": "4 * batch * 1050 + 8 * batch + 4"}\n',
        "predicted_step_bytes(64, 256)['optimizer state'] should be a number of bytes",
    ),
}
MISTYPED["8-chip"] = {
    "launch-vs-completion": Wrong(
        "True and False written as strings",
        'LAUNCH_BOUND = "False"\n',
        "LAUNCH_BOUND should be True or False (without quotes), not the string 'False'",
    ),
    "wall-vs-cpu": Wrong(
        "a ratio as a string",
        'PREDICTED_CPU_PER_WALL = {"sleep": "0", "matmul, at most": DEFAULT_THREADS}\n',
        "PREDICTED_CPU_PER_WALL['sleep'] should be a number",
    ),
    "bandwidth-vs-size": Wrong(
        "the formula written as text",
        'def copy_bytes(buffer_bytes):\n    return "2 * buffer_bytes"\n',
        "copy_bytes(4096) should be a number of bytes",
    ),
    "threads": Wrong(
        "the speedup with its x",
        'def max_speedup(threads):\n    return f"{threads}x"\n',
        "max_speedup(1) should be a number",
    ),
}

PLANTED["distributed"] = {
    "all-reduce": Wrong(
        "all_reduce counts the ranks instead of summing their values",
        "def reduced_value(world_size):\n    return world_size\n",
        "your formula gives 2",
    ),
    "all-reduce-cost": Wrong(
        "a collective's time is its fixed cost at any size",
        "GROWS_PAST_4X = False\n",
        "more than 4 times",
        ungraded=("not graded on this machine",),
    ),
    "fully-shard": Wrong(
        "every rank keeps the whole model, as DDP does",
        "def bytes_per_rank(model_bytes, world_size):\n    return model_bytes\n",
        "your formula gives 1,597,480",
    ),
    "ring": Wrong(
        "each rank sends its tensor once",
        "def ring_bytes_sent(nbytes, world_size):\n    return nbytes\n",
        "your formula gives 49,152",
    ),
}
PLANTED_ALONE += [
    (
        "distributed",
        "ring",
        Wrong(
            "each rank sends its whole tensor to every other rank",
            "def ring_bytes_sent(nbytes, world_size):\n    return (world_size - 1) * nbytes\n",
            "your formula gives 98,304",
        ),
    ),
]
CHANGES["distributed"] = {
    "all-reduce": [
        Change(
            "**Change** `WORLD_SIZE` to `3` and run again",
            edits={"WORLD_SIZE = 2\n": "WORLD_SIZE = 3\n"},
        )
    ],
    "all-reduce-cost": [
        Change(
            "**Change** `SMALLER` to `256` (1 KB against 16 KB) and predict again",
            edits={"SMALLER = 2**18  # floats: 1 MB": "SMALLER = 256  # floats: 1 KB"},
            answers={"all-reduce-cost": "GROWS_PAST_4X = False\n"},
        )
    ],
    "fully-shard": [Change("**Change** `SHARDS` to `3` and run again", edits={"SHARDS = 2\n": "SHARDS = 3\n"})],
    "ring": [Change("**Change** `RING_SIZE` to `4` and run again", edits={"RING_SIZE = 3\n": "RING_SIZE = 4\n"})],
}
MISTYPED["distributed"] = {
    "all-reduce": Wrong(
        "the value written as text",
        'def reduced_value(world_size):\n    return "3"\n',
        "reduced_value(2) should be a number, not the string '3'",
    ),
    "all-reduce-cost": Wrong(
        "True and False written as strings",
        'GROWS_PAST_4X = "True"\n',
        "GROWS_PAST_4X should be True or False (without quotes), not the string 'True'",
    ),
    "fully-shard": Wrong(
        "the formula written as text",
        'def bytes_per_rank(model_bytes, world_size):\n    return "model_bytes / world_size"\n',
        "bytes_per_rank(model_bytes, 2) should be a number of bytes",
    ),
    "ring": Wrong(
        "the formula written as text",
        'def ring_bytes_sent(nbytes, world_size):\n    return "2 (p - 1) / p"\n',
        "ring_bytes_sent(nbytes, 3) should be a number of bytes",
    ),
}
