import torch
m = torch.nn.Linear(4, 1)
loss = m(torch.full((2, 4), float("inf"))).sum()  # an inf input makes the gradients non-finite
loss.backward()
torch.nn.utils.clip_grad_norm_(m.parameters(), max_norm=1.0, error_if_nonfinite=True)
