"""Tiny MLP trained a few steps with deepspeed.initialize (ZeRO stage 1) on CPU over gloo."""
import deepspeed
import torch
from deepspeed.utils.logging import set_log_level_from_string

CONFIG = {
    "train_micro_batch_size_per_gpu": 4,
    "gradient_accumulation_steps": 1,
    "steps_per_print": 1,
    "wall_clock_breakdown": False,
    "zero_optimization": {"stage": 1},
    "zero_allow_untested_optimizer": True,
    "gradient_clipping": 1.0,
}


def main():
    # ranks log at WARNING by default; INFO shows the engine/ZeRO start-up lines users normally see
    set_log_level_from_string("info")
    deepspeed.init_distributed(dist_backend="gloo")
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
    engine, _, _, _ = deepspeed.initialize(model=model, optimizer=opt, config=CONFIG)
    g = torch.Generator().manual_seed(engine.global_rank)
    for step in range(5):
        x = torch.randn(4, 16, generator=g)
        y = x.sum(dim=1, keepdim=True)
        loss = torch.nn.functional.mse_loss(engine(x), y)
        engine.backward(loss)
        engine.step()
        print(f"rank {engine.global_rank} step {step} loss {loss.item():.4f}", flush=True)
    engine.save_checkpoint("/tmp/ds-tiny-ckpt")


if __name__ == "__main__":
    main()
