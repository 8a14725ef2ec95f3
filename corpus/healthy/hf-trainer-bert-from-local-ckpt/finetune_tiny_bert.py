"""Tiny BERT: save a base model and a local WordPiece tokenizer, reload it as a classifier
(the classic "Some weights ... newly initialized" warning), fine-tune a few steps with the Trainer,
evaluate with a metric, then resume from the saved checkpoint and finish."""
import os
import sys

import numpy as np
import torch
from transformers import (BertConfig, BertForSequenceClassification, BertModel, BertTokenizerFast, Trainer,
                          TrainingArguments, set_seed)

WORDS = ["good", "bad", "great", "awful", "fine", "poor", "nice", "sad", "happy", "the", "movie", "was", "very"]


def build_base(root):
    os.makedirs(root, exist_ok=True)
    with open(os.path.join(root, "vocab.txt"), "w") as f:
        f.write("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + WORDS) + "\n")
    tok = BertTokenizerFast(vocab_file=os.path.join(root, "vocab.txt"))
    cfg = BertConfig(vocab_size=len(WORDS) + 5, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                     intermediate_size=64, max_position_embeddings=64)
    BertModel(cfg).save_pretrained(root)
    tok.save_pretrained(root)


class Sentences(torch.utils.data.Dataset):
    def __init__(self, tok, n, seed):
        rng = np.random.default_rng(seed)
        pos, neg = ["good", "great", "fine", "nice", "happy"], ["bad", "awful", "poor", "sad"]
        self.items = []
        for _ in range(n):
            label = int(rng.integers(0, 2))
            word = rng.choice(pos if label else neg)
            enc = tok(f"the movie was very {word}", padding="max_length", max_length=12, truncation=True)
            self.items.append({**{k: torch.tensor(v) for k, v in enc.items()}, "labels": torch.tensor(label)})

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        return self.items[i]


def accuracy(pred):
    return {"accuracy": float((pred.predictions.argmax(-1) == pred.label_ids).mean())}


def main(out):
    set_seed(0)
    base = os.path.join(out, "base")
    build_base(base)
    tok = BertTokenizerFast.from_pretrained(base)
    model = BertForSequenceClassification.from_pretrained(base, num_labels=2)
    args = TrainingArguments(output_dir=os.path.join(out, "run"), max_steps=10, per_device_train_batch_size=8,
                             learning_rate=5e-3, logging_steps=1, eval_strategy="steps", eval_steps=5,
                             save_strategy="steps", save_steps=5, report_to="none", use_cpu=True)
    train, dev = Sentences(tok, 64, 0), Sentences(tok, 16, 1)
    Trainer(model=model, args=args, train_dataset=train, eval_dataset=dev, compute_metrics=accuracy).train()
    args.max_steps = 15
    trainer = Trainer(model=BertForSequenceClassification.from_pretrained(base, num_labels=2), args=args,
                      train_dataset=train, eval_dataset=dev, compute_metrics=accuracy)
    trainer.train(resume_from_checkpoint=True)
    print(trainer.evaluate())


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "/tmp/hf-bert-out")
