"""What this build of torch selected: BLAS, CPU capability, parallel backend and threads (and the GPU, if any)."""

from __future__ import annotations

import textwrap

import torch

from pytorch_floors.claims import claim
from pytorch_floors.measure import detect_device

SETTINGS = ("TORCH_VERSION", "BLAS_INFO", "LAPACK_INFO", "USE_MKL", "USE_MKLDNN", "USE_OPENMP", "USE_CUDA", "USE_ROCM")


def build_settings() -> dict[str, str]:
    """The `Build settings:` line of torch.__config__.show() as a dict (compiler paths and flags included)."""
    for line in torch.__config__.show().splitlines():
        if line.strip().startswith("- Build settings:"):
            body = line.split(":", 1)[1]
            pairs = (item.split("=", 1) for item in body.split(", ") if "=" in item)
            return {key.strip(): value.strip() for key, value in pairs}
    return {}


def library_lines() -> list[str]:
    """Lines of torch.__config__.show() that name the math libraries and the CPU capability, without paths."""
    keep = (
        "Math Kernel Library",
        "MKL-DNN",
        "oneDNN",
        "OpenBLAS",
        "LAPACK",
        "CPU capability",
        "OpenMP",
        "CUDA Runtime",
        "CuDNN",
        "Magma",
    )
    lines = []
    for line in torch.__config__.show().splitlines():
        text = line.strip().removeprefix("- ")
        if any(word in text for word in keep) and "/" not in text and "Build settings" not in text:
            lines.append(text)
    return lines


def parallel_lines() -> list[str]:
    """Thread counts and the parallel backend from torch.__config__.parallel_info()."""
    keep = ("at::get_num_threads", "at::get_num_interop_threads", "parallel backend", "hardware_concurrency")
    return [line.strip() for line in torch.__config__.parallel_info().splitlines() if any(k in line for k in keep)]


def _wrapped(text: str) -> str:
    return textwrap.fill(text, width=78, initial_indent="  ", subsequent_indent="      ")


def main() -> None:
    settings = build_settings()
    print("torch.__config__.show(), the lines about kernels:")
    for line in library_lines():
        print(_wrapped(line))
    print(_wrapped("build settings: " + ", ".join(f"{key}={settings[key]}" for key in SETTINGS if key in settings)))
    print()
    print("torch.__config__.parallel_info():")
    for line in parallel_lines():
        print(f"  {line}")
    print()
    print(f"torch.backends.cpu.get_cpu_capability(): {torch.backends.cpu.get_cpu_capability()}")
    print(f"torch.backends.mkldnn.is_available():    {torch.backends.mkldnn.is_available()}")
    lines = library_lines() + parallel_lines()
    claim(
        "the build names its BLAS, its CPU capability and its parallel backend",
        held="BLAS_INFO" in settings
        and any("CPU capability" in line for line in lines)
        and any("parallel backend" in line for line in lines),
        detail=f"BLAS_INFO={settings.get('BLAS_INFO')}",
    )
    device = detect_device()
    if device.type == "cuda":
        props = torch.cuda.get_device_properties(0)
        print()
        print(f"GPU: {props.name}, compute capability {props.major}.{props.minor}, {props.multi_processor_count} SMs")
        print(f"CUDA runtime {torch.version.cuda}, cuDNN {torch.backends.cudnn.version()}")
        print(f"kernels compiled for: {' '.join(torch.cuda.get_arch_list())}")
        matmul = torch.backends.cuda.matmul
        precision = getattr(matmul, "fp32_precision", None)
        print(f"float32 matmul precision: {precision if precision is not None else matmul.allow_tf32}")
    elif device.type == "mps":
        print()
        print("GPU: Apple MPS (Metal); matmul goes to Metal Performance Shaders")
    else:
        print()
        print(f"this build has no GPU (USE_CUDA={settings.get('USE_CUDA', '?')}); on a CUDA machine this")
        print("proof also prints the GPU, its compute capability, the CUDA and cuDNN")
        print("versions and the GPU architectures its kernels were compiled for")


if __name__ == "__main__":
    main()
