import sys, torch, torch.nn as nn, torch.nn.functional as F
mode = sys.argv[1]
if mode == "bs":
    logits = torch.randn(4, 10); target = torch.randint(0, 10, (8,))
    F.cross_entropy(logits, target)
elif mode == "unscale":
    m = nn.Linear(8, 2).half(); opt = torch.optim.SGD(m.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cpu")
    loss = m(torch.randn(4, 8).half()).float().sum()
    scaler.scale(loss).backward(); scaler.step(opt)
elif mode == "multinomial":
    probs = torch.softmax(torch.tensor([[1.0, float("nan"), 0.5]]), dim=-1)
    torch.multinomial(probs, num_samples=1)
