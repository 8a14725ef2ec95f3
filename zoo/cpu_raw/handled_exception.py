"""A training loop that logs a failed evaluation with logging.exception and carries on to the end:
the traceback in its log is not what ended the run (it exits 0)."""
import logging

import torch

logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
log = logging.getLogger("train")


def evaluate(step: int) -> float:
    metrics = {"loss": 0.5}
    return metrics["accuracy"]  # KeyError: this evaluation is optional and fails


model = torch.nn.Linear(4, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(1, 13):
    loss = model(torch.randn(8, 4)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    log.info("step %d loss %.4f", step, loss.item())
    if step == 4:
        try:
            evaluate(step)
        except KeyError:
            log.exception("evaluation failed at step %d, continuing", step)
log.info("training finished after %d steps", step)
