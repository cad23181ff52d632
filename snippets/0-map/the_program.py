"""The one-page program the whole site explains, run for real on random data."""

import torch

torch.manual_seed(0)
x = torch.randn(64, 784)
y = torch.randint(0, 10, (64,))
model = torch.nn.Linear(784, 10)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

loss = torch.nn.functional.cross_entropy(model(x), y)
loss.backward()
optimizer.step()

print(f"x: {tuple(x.shape)} {x.dtype}")
print(f"loss: {loss.item():.4f} (grad_fn={type(loss.grad_fn).__name__})")
print(f"weight.grad: {tuple(model.weight.grad.shape)}")
