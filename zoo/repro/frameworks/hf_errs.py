import sys
mode = sys.argv[1]
if mode == "pad":
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast
    tok = Tokenizer(models.WordLevel({"hello": 0, "world": 1, "[UNK]": 2}, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    t = PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="[UNK]", eos_token="world")
    t(["hello world", "hello"], padding=True)
elif mode == "init":
    from transformers import BertConfig, BertModel, BertForSequenceClassification
    cfg = BertConfig(vocab_size=50, hidden_size=16, num_hidden_layers=1, num_attention_heads=2, intermediate_size=32)
    BertModel(cfg).save_pretrained("/tmp/repro/tinybert")
    BertForSequenceClassification.from_pretrained("/tmp/repro/tinybert", num_labels=3)
