"""Floor 8 placeholder proof: torch is importable and a tensor can be made."""

import torch

t = torch.arange(6).reshape(2, 3)
print(f"torch {torch.__version__}: {tuple(t.shape)} {t.dtype}, sum = {t.sum().item()}")
