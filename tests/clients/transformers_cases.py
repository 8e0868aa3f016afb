"""Hugging Face transformers' released model code on tiny configs (run by test_clients.py
under both libraries): GPT-2, BERT and Llama forward, backward, an AdamW step, greedy
``generate``, module hooks, ``save_pretrained``/``from_pretrained``, and the same models
under ``torch.compile``.

Weights come from NumPy (one seeded draw per parameter name), so both libraries compute
the same function. Nothing is downloaded. Under real PyTorch the compiled scenarios run
eagerly (Inductor needs a C++ toolchain and minutes); hookgrad's compiled results must
equal them.
"""
import sys
import tempfile
import zlib

import numpy as np

# transformers imports torchvision when it is installed (for image processors); its C
# extension is built for PyTorch's own wheel, and none of these scenarios use it
sys.modules.setdefault("torchvision", None)

IDS = [[1, 5, 9, 2, 7, 3], [4, 4, 8, 11, 6, 0]]


def _hookgrad():
    import torch
    return torch.__name__ == "hookgrad"


def _seed_weights(model):
    """Every parameter drawn from NumPy, seeded by its name: norms' weights near 1,
    the rest N(0, 0.1)."""
    import torch
    with torch.no_grad():
        for name, p in model.named_parameters():
            rng = np.random.default_rng(zlib.crc32(name.encode()))
            w = rng.normal(0, 0.1, tuple(p.shape))
            if "norm" in name.lower() or name.endswith(("ln_1.weight", "ln_2.weight",
                                                        "ln_f.weight")):
                w = 1 + w
            p.copy_(torch.tensor(w.astype(np.float32)))
    return model


def _ids(rows=IDS):
    import torch
    return torch.tensor(rows)


def gpt2(seed_weights=True):
    from transformers import GPT2Config, GPT2LMHeadModel
    cfg = GPT2Config(n_layer=2, n_head=2, n_embd=16, vocab_size=32, n_positions=16,
                     resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0)
    model = GPT2LMHeadModel(cfg)
    return _seed_weights(model) if seed_weights else model


def bert():
    from transformers import BertConfig, BertForSequenceClassification
    cfg = BertConfig(num_hidden_layers=2, num_attention_heads=2, hidden_size=16,
                     intermediate_size=32, vocab_size=32, max_position_embeddings=16,
                     num_labels=3, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
    return _seed_weights(BertForSequenceClassification(cfg))


def llama():
    from transformers import LlamaConfig, LlamaForCausalLM
    cfg = LlamaConfig(num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                      hidden_size=16, intermediate_size=32, vocab_size=32,
                      max_position_embeddings=32, pad_token_id=0, bos_token_id=1,
                      eos_token_id=31)
    return _seed_weights(LlamaForCausalLM(cfg))


def _grads(model, names):
    params = dict(model.named_parameters())
    return {n: params[n].grad for n in names}


def gpt2_train_step():
    """Forward with labels, ``loss.backward()``, one AdamW step, the loss after it."""
    import torch
    model = gpt2()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
    ids = _ids()
    out = model(ids, labels=ids)
    out.loss.backward()
    grads = _grads(model, ["transformer.wte.weight", "transformer.h.0.attn.c_attn.weight",
                           "transformer.h.1.mlp.c_proj.bias"])
    opt.step()
    return {"loss": out.loss, "logits": out.logits[:, -1], "grads": grads,
            "loss_after": model(ids, labels=ids).loss}


def bert_classify_backward():
    """Sequence classification with a padding mask: logits, loss, gradients."""
    import torch
    model = bert()
    ids = _ids()
    mask = torch.tensor([[1, 1, 1, 1, 1, 1], [1, 1, 1, 1, 0, 0]])
    out = model(input_ids=ids, attention_mask=mask, labels=torch.tensor([0, 2]))
    out.loss.backward()
    return {"logits": out.logits, "loss": out.loss,
            "grads": _grads(model, ["bert.embeddings.word_embeddings.weight",
                                    "bert.encoder.layer.1.attention.self.query.weight",
                                    "classifier.weight"])}


def llama_generate():
    """Forward and backward (GQA: 4 query heads, 2 key/value heads) and greedy decoding."""
    import torch
    model = llama()
    ids = _ids()
    out = model(ids, labels=ids)
    out.loss.backward()
    model.eval()
    with torch.no_grad():
        tokens = model.generate(ids[:1], max_new_tokens=5, do_sample=False)
        padded = model.generate(ids, attention_mask=torch.tensor([[1] * 6, [0, 0, 1, 1, 1, 1]]),
                                max_new_tokens=3, do_sample=False)
    return {"loss": out.loss, "grads": _grads(model, ["model.embed_tokens.weight",
                                                      "model.layers.0.self_attn.k_proj.weight"]),
            "tokens": tokens, "padded": padded}


def module_hooks():
    """A forward hook on GPT-2's attention module, a full backward hook on its MLP."""
    model = gpt2()
    seen = {}

    def attn_hook(module, args, output):
        seen["attn_out"] = output[0].detach()

    def mlp_hook(module, grad_input, grad_output):
        seen["mlp_grad_in"] = grad_input[0]
        seen["mlp_grad_out"] = grad_output[0]
        return (grad_input[0] * 0.5,)

    model.transformer.h[0].attn.register_forward_hook(attn_hook)
    model.transformer.h[1].mlp.register_full_backward_hook(mlp_hook)
    ids = _ids()
    out = model(ids, labels=ids)
    out.loss.backward()
    seen["wte_grad"] = model.transformer.wte.weight.grad
    seen["attention"] = model.config._attn_implementation  # F.scaled_dot_product_attention
    return seen


def save_and_reload():
    """``save_pretrained`` (safetensors) then ``from_pretrained``: equal logits."""
    from transformers import GPT2LMHeadModel, LlamaForCausalLM
    result = {}
    for name, make, cls in (("gpt2", gpt2, GPT2LMHeadModel), ("llama", llama, LlamaForCausalLM)):
        model = make().eval()
        with tempfile.TemporaryDirectory() as d:
            model.save_pretrained(d)
            again = cls.from_pretrained(d).eval()
        ids = _ids()
        result[name] = {"before": model(ids).logits[:, -1], "after": again(ids).logits[:, -1]}
    return result


def _compile(fn):
    import torch
    return torch.compile(fn) if _hookgrad() else fn


def _train_step(model, opt):
    def step(ids):
        loss = model(ids, labels=ids).loss
        loss.backward()
        opt.step()
        opt.zero_grad()
        return loss
    return step


def compiled_training():
    """Three AdamW steps of GPT-2 and Llama in one compiled step function each."""
    import torch
    result = {}
    for name, make in (("gpt2", gpt2), ("llama", llama)):
        model = make()
        step = _compile(_train_step(model, torch.optim.AdamW(model.parameters(), lr=1e-2)))
        result[name] = [step(_ids()) for _ in range(3)]
    return result


def compiled_forward():
    """``torch.compile(model)`` forward of all three models."""
    import torch
    result = {}
    for name, make in (("gpt2", gpt2), ("bert", bert), ("llama", llama)):
        model = _compile(make().eval())
        with torch.no_grad():
            result[name] = model(_ids()).logits
    return result


def compiled_generate():
    """Greedy decoding of GPT-2 and Llama with ``model.forward = torch.compile(model.forward)``,
    twice: the second call meets the programs of the first with a new cache (DynamicCache,
    an argument object that holds Tensors and grows in place)."""
    import torch
    result = {}
    for name, make in (("gpt2", gpt2), ("llama", llama)):
        model = make().eval()
        model.forward = _compile(model.forward)
        with torch.no_grad():
            result[name] = [model.generate(_ids(), max_new_tokens=4, do_sample=False,
                                           pad_token_id=0) for _ in range(2)]
    return result
