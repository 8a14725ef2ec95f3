"""Tiny GPT-2 built from a config, trained a few steps on synthetic tokens with the HF Trainer (CPU, no hub)."""
import sys

import torch
from transformers import GPT2Config, GPT2LMHeadModel, Trainer, TrainingArguments, set_seed


class RandomTokens(torch.utils.data.Dataset):
    def __init__(self, n, seq=32, vocab=256, seed=0):
        g = torch.Generator().manual_seed(seed)
        self.x = torch.randint(0, vocab, (n, seq), generator=g)

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return {"input_ids": self.x[i], "labels": self.x[i]}


def main(out_dir):
    set_seed(0)
    cfg = GPT2Config(vocab_size=256, n_positions=64, n_embd=32, n_layer=2, n_head=2)
    model = GPT2LMHeadModel(cfg)
    args = TrainingArguments(
        output_dir=out_dir,
        max_steps=12,
        per_device_train_batch_size=4,
        per_device_eval_batch_size=4,
        learning_rate=1e-3,
        logging_steps=1,
        eval_strategy="steps",
        eval_steps=6,
        save_strategy="steps",
        save_steps=6,
        report_to="none",
        use_cpu=True,
        dataloader_num_workers=0,
    )
    trainer = Trainer(model=model, args=args, train_dataset=RandomTokens(96), eval_dataset=RandomTokens(16, seed=1))
    result = trainer.train()
    print(result)
    print(trainer.evaluate())
    trainer.save_model(out_dir + "/final")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "/tmp/hf-tiny-out")
