"""tiny_gguf.py writes a tiny random-weight Llama model in GGUF, for tests against llama.cpp.

Usage: python3 scripts/tiny_gguf.py OUT.gguf [--vocab 512] [--embd 64] [--layers 2] [--seed 0]

The model is a real Llama architecture (RMSNorm, rotary attention, SwiGLU feed-forward) with
random float32 weights and a SentencePiece-style ("llama") vocabulary: <unk>, <s>, </s>, the byte
tokens <0x00>..<0x7F> (ASCII text always tokenizes, and every token decodes to valid UTF-8), the
space marker and short ASCII pieces up to --vocab. Text outside ASCII does not tokenize. It generates random text at llama.cpp's full speed for its size;
nothing is downloaded. Needs numpy and the `gguf` package (requirements.txt).
"""

import argparse
import string
import sys

import numpy as np

try:
    import gguf
except ImportError as e:  # the caller skips with this reason
    sys.exit("tiny_gguf: the gguf package is not importable by %s (%s)" % (sys.executable, e))


def vocabulary(size):
    """vocabulary returns (tokens, scores, types) of a SentencePiece-style vocabulary."""
    T = gguf.TokenType
    tokens = ["<unk>", "<s>", "</s>"]
    types = [T.UNKNOWN, T.CONTROL, T.CONTROL]
    for b in range(0x80):
        tokens.append("<0x%02X>" % b)
        types.append(T.BYTE)
    # "\u2581" alone: SentencePiece marks a leading space with it, and a text starting with a
    # character that has no "\u2581"-piece (e.g. "<") must still tokenize (llama.cpp would look
    # for the byte tokens of its UTF-8, which this ASCII-only vocabulary lacks).
    pieces = ["\u2581"]
    for c in string.ascii_lowercase + string.ascii_uppercase + string.digits + ".,!?;:'-()":
        pieces += [c, "\u2581" + c]
    words = ("the of and to in is it you that he was for on are with as his they be at one have "
             "this from or had by hot word but what some we can out other were all there when up "
             "use your how said an each she which do their time if will way about many then them "
             "write would like so these her long make thing see him two has look more day could go "
             "come did number sound no most people my over know water than call first who may down "
             "side been now find any new work part take get place made live where after back little "
             "only round man year came show every good me give our under name very through just form "
             "sentence great think say help low line differ turn cause much mean before move right "
             "boy old too same tell does set three want air well also play small end put home read "
             "hand port large spell add even land here must big high such follow act why ask men "
             "change went light kind off need house picture try us again animal point mother world")
    for w in words.split():
        pieces += ["\u2581" + w, w]
    for p in pieces:
        if len(tokens) >= size:
            break
        if p not in tokens:
            tokens.append(p)
            types.append(T.NORMAL)
    while len(tokens) < size:  # pad with two-letter pieces
        a, b = divmod(len(tokens), 26)
        p = "\u2581" + string.ascii_lowercase[a % 26] + string.ascii_lowercase[b]
        if p not in tokens:
            tokens.append(p)
            types.append(T.NORMAL)
        else:
            tokens.append(p + str(len(tokens)))
            types.append(T.NORMAL)
    scores = [0.0] * 3 + [-1000.0] * 0x80 + [-float(i) for i in range(len(tokens) - 3 - 0x80)]
    return tokens, scores, types


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--vocab", type=int, default=512)
    ap.add_argument("--embd", type=int, default=64)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--ff", type=int, default=128)
    ap.add_argument("--ctx", type=int, default=2048)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args(argv)
    if a.vocab < 3 + 0x80 + 16:
        ap.error("--vocab must be at least %d" % (3 + 0x80 + 16))
    rng = np.random.default_rng(a.seed)
    head_dim = a.embd // a.heads

    w = gguf.GGUFWriter(a.out, "llama")
    w.add_name("inferbench-tiny-random-llama")
    w.add_context_length(a.ctx)
    w.add_embedding_length(a.embd)
    w.add_block_count(a.layers)
    w.add_feed_forward_length(a.ff)
    w.add_head_count(a.heads)
    w.add_head_count_kv(a.heads)
    w.add_rope_dimension_count(head_dim)
    w.add_rope_freq_base(10000.0)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_file_type(gguf.LlamaFileType.ALL_F32)
    tokens, scores, types = vocabulary(a.vocab)
    w.add_tokenizer_model("llama")
    w.add_token_list(tokens)
    w.add_token_scores(scores)
    w.add_token_types(types)
    w.add_bos_token_id(1)
    w.add_eos_token_id(2)
    w.add_unk_token_id(0)
    w.add_add_bos_token(True)
    w.add_add_eos_token(False)
    w.add_chat_template(
        "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n"
        "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")

    def rand(*shape):
        return (rng.standard_normal(shape) * 0.02).astype(np.float32)

    ones = lambda n: np.ones(n, dtype=np.float32)  # noqa: E731
    w.add_tensor("token_embd.weight", rand(a.vocab, a.embd))
    for i in range(a.layers):
        p = "blk.%d." % i
        w.add_tensor(p + "attn_norm.weight", ones(a.embd))
        w.add_tensor(p + "attn_q.weight", rand(a.embd, a.embd))
        w.add_tensor(p + "attn_k.weight", rand(a.embd, a.embd))
        w.add_tensor(p + "attn_v.weight", rand(a.embd, a.embd))
        w.add_tensor(p + "attn_output.weight", rand(a.embd, a.embd))
        w.add_tensor(p + "ffn_norm.weight", ones(a.embd))
        w.add_tensor(p + "ffn_gate.weight", rand(a.ff, a.embd))
        w.add_tensor(p + "ffn_up.weight", rand(a.ff, a.embd))
        w.add_tensor(p + "ffn_down.weight", rand(a.embd, a.ff))
    w.add_tensor("output_norm.weight", ones(a.embd))
    w.add_tensor("output.weight", rand(a.vocab, a.embd))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


if __name__ == "__main__":
    main()
