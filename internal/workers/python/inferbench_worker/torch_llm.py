"""torch_llm: greedy generation with a random-weight causal language model built from a config.

With transformers installed (and backend auto or transformers) the model is a Llama built by
AutoModelForCausalLM.from_config; otherwise a small decoder written here in torch, with a static
KV cache. No weights or tokenizers are downloaded: prompts are random token ids.

Params:
  backend          auto | transformers | torch (default auto)
  model_id         real weights instead of random ones (transformers backend): a local directory
                   saved with save_pretrained, or a Hugging Face id found in the local cache
                   ($HF_HUB_CACHE, $HF_HOME/hub, ~/.cache/huggingface/hub). Nothing is ever
                   downloaded: a model that is not local is a bad_params error saying so. The
                   size params are then the model's own.
  vocab_size       (default 1024)      hidden_size   (default 128)
  num_layers       (default 2)         num_heads     (default 4)
  intermediate_size (default 4 * hidden_size)
  prompt_tokens    prompt length (default 32)
  max_new_tokens   tokens generated per iteration (default 16), always generated in full
  batch_size       sequences per iteration (default 1)
  dtype, device, threads, seed, compile_mode: as in torch_vision
  variant          eager | compiled | kernelized (default eager)
                   compiled: static cache + torch.compile; kernelized: transformers model with
                   the `kernels` package's kernelize() over transformers' own kernel mapping
                   (hub kernels, fetched or found in the local Hugging Face cache); each is
                   skipped with the reason when the installed libraries cannot do it, and a
                   kernelized setup that replaced no layer says why in a warning.
  local_kernels    kernelized: kernels from local kernel repositories, as LAYER=DIR[,LAYER=DIR]:
                   DIR is laid out as the `kernels` package's LocalLayerRepository expects
                   (metadata.json and a package whose `layers` module has a class LAYER) and
                   replaces the forward of the layers transformers marks with the name LAYER
                   (RMSNorm, SiLU, ...) on the scenario's device, before the hub mapping.

Each iteration reports ttft_ms (prefill to the first generated token), token_ms (offset of every
generation step from the iteration start; a step carries batch_size tokens), output_tokens and
a per-iteration tokens_per_s. On GPU every step is synchronised before its time is read.
"""

import math
import time

from .common import (BadParams, DecodeCompiled, StepMarked, TorchAdapter, TorchSync, Unsupported,
                     compile_module, get, require, set_threads, torch_device, torch_dtype)

VARIANTS = ["eager", "compiled", "kernelized"]


class TorchLLM(TorchAdapter):
    name = "torch_llm"

    def versions(self):
        try:
            import transformers  # noqa: F401  (so that torch_versions reports it)
        except ImportError:
            pass
        return super().versions()

    def setup(self, params):
        torch = self.torch
        self.params = params
        set_threads(params)
        variant = get(params, "variant", "eager", str, choices=VARIANTS)
        backend = get(params, "backend", "auto", str, choices=["auto", "transformers", "torch"])
        cfg = {
            "vocab_size": get(params, "vocab_size", 1024, int),
            "hidden_size": get(params, "hidden_size", 128, int),
            "num_layers": get(params, "num_layers", 2, int),
            "num_heads": get(params, "num_heads", 4, int),
        }
        cfg["intermediate_size"] = get(params, "intermediate_size", 4 * cfg["hidden_size"], int)
        if cfg["hidden_size"] % cfg["num_heads"]:
            raise BadParams("hidden_size %d is not a multiple of num_heads %d"
                            % (cfg["hidden_size"], cfg["num_heads"]))
        self.prompt = get(params, "prompt_tokens", 32, int)
        self.new = get(params, "max_new_tokens", 16, int)
        self.batch = get(params, "batch_size", 1, int)
        if self.prompt < 1 or self.new < 1 or self.batch < 1:
            raise BadParams("prompt_tokens, max_new_tokens and batch_size must be positive")
        self.dev = torch_device(get(params, "device", "auto", str))
        dtype = torch_dtype(get(params, "dtype", "float32", str))
        torch.manual_seed(get(params, "seed", 0, int))
        self.sync = TorchSync(self.dev)
        self.default_items = self.batch

        use_hf = backend == "transformers"
        if backend == "auto":
            try:
                import transformers  # noqa: F401

                use_hf = True
            except ImportError:
                use_hf = False
        self.model_id = get(params, "model_id", None, str)
        if self.model_id and not use_hf:
            raise BadParams("param model_id needs the transformers backend (backend is %s%s)"
                            % (backend, "" if backend == "torch" else ", transformers missing"))
        if variant == "kernelized" and not use_hf:
            raise Unsupported("variant kernelized needs transformers and the `kernels` package; "
                              "transformers is not installed (or backend is torch)")

        t0 = time.perf_counter_ns()
        if use_hf:
            gen = HFGenerator(self, cfg, dtype, variant)
        else:
            gen = TinyGenerator(self, cfg, dtype, variant)
        self.gen = gen
        cfg.update(gen.cfg)
        self.ids = torch.randint(0, cfg["vocab_size"], (self.batch, self.prompt), device=self.dev)
        self.sync.sync()
        load_ms = (time.perf_counter_ns() - t0) / 1e6

        with torch.inference_mode():
            first = gen.generate(self.ids)[-1]
            steady = gen.generate(self.ids)[-1]
        compile_ms = max(first - steady, 0.0) if variant == "compiled" else None
        info = {"backend": gen.backend, "variant": variant, "device": str(self.dev),
                "dtype": str(dtype).replace("torch.", ""), "batch_size": str(self.batch),
                "prompt_tokens": str(self.prompt), "max_new_tokens": str(self.new),
                "input_shape": "%dx%d" % (self.batch, self.prompt),
                "parameters": str(gen.parameters()), "threads": str(torch.get_num_threads())}
        info.update({k: str(v) for k, v in cfg.items()})
        if getattr(gen, "kernel_layers", None) is not None:
            info["kernel_layers"] = str(gen.kernel_layers)
            info["kernelizable_layers"] = str(gen.kernelizable)
        if self.model_id:
            info["model_id"] = self.model_id
            info["weights"] = gen.weights
        if gen.marked is not None:  # compiled: every compiled step was marked (StepMarked)
            info["marked_steps"] = str(gen.marked.calls)
            if hasattr(gen.marked, "prefills"):  # transformers: prefills ran eagerly
                info["eager_prefills"] = str(gen.marked.prefills)
        return {"load_time_ms": load_ms, "compile_time_ms": compile_ms, "info": info,
                "values": {"first_call_ms": first}, "warnings": getattr(gen, "warnings", [])}

    def run(self, n, rec, warmup):
        torch = self.torch
        b = self.batch
        with torch.inference_mode():
            for _ in range(n):
                steps = self.gen.generate(self.ids)
                total = steps[-1]
                rec.add(total, items=b, ttft_ms=steps[0], token_ms=steps, token_count=b,
                        input_tokens=b * self.prompt, output_tokens=b * len(steps),
                        values={"tokens_per_s": b * len(steps) / (total / 1e3) if total else 0.0})

    def teardown(self):
        self.gen = None
        super().teardown()


class TinyGenerator:
    """TinyGenerator runs greedy generation on the torch-only decoder with a static KV cache:
    every call attends over the whole cache with a position mask, so shapes never change and a
    compiled step is compiled once for the prefill and once for the decode step."""

    backend = "torch"

    def __init__(self, a, cfg, dtype, variant):
        torch = a.torch
        self.torch = torch
        self.a = a
        self.cfg = {}
        max_len = a.prompt + a.new
        self.model = build_tiny(torch, cfg, max_len).eval().to(a.dev, dtype)
        hd = cfg["hidden_size"] // cfg["num_heads"]
        shape = (cfg["num_layers"], a.batch, cfg["num_heads"], max_len, hd)
        self.k = torch.zeros(shape, device=a.dev, dtype=dtype)
        self.v = torch.zeros(shape, device=a.dev, dtype=dtype)
        self.prefill_pos = torch.arange(a.prompt, device=a.dev)
        self.step_pos = [torch.tensor([a.prompt + i], device=a.dev) for i in range(a.new)]
        self.fn = self.model
        self.marked = None
        if variant == "compiled":
            self.fn = self.marked = StepMarked(torch, compile_module(self.model, a.params, a.name))

    def parameters(self):
        return sum(p.numel() for p in self.model.parameters())

    def generate(self, ids):
        """generate returns the offset in ms of every generated step from the start."""
        sync = self.a.sync.sync
        pc = time.perf_counter_ns
        out = []
        t0 = pc()
        logits = self.fn(ids, self.prefill_pos, self.k, self.v)
        tok = logits[:, -1].argmax(-1, keepdim=True)
        sync()
        out.append((pc() - t0) / 1e6)
        for i in range(1, self.a.new):
            logits = self.fn(tok, self.step_pos[i - 1], self.k, self.v)
            tok = logits[:, -1].argmax(-1, keepdim=True)
            sync()
            out.append((pc() - t0) / 1e6)
        return out


def build_tiny(torch, cfg, max_len):
    """build_tiny returns a small pre-norm decoder-only transformer with learned positions."""
    nn = torch.nn
    F = torch.nn.functional
    d, h, ff = cfg["hidden_size"], cfg["num_heads"], cfg["intermediate_size"]
    hd = d // h
    sdpa = getattr(F, "scaled_dot_product_attention", None)

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1 = nn.LayerNorm(d)
            self.qkv = nn.Linear(d, 3 * d)
            self.proj = nn.Linear(d, d)
            self.ln2 = nn.LayerNorm(d)
            self.fc1 = nn.Linear(d, ff)
            self.fc2 = nn.Linear(ff, d)

        def forward(self, x, pos, mask, kc, vc):
            b, t, _ = x.shape
            q, k, v = self.qkv(self.ln1(x)).split(d, dim=-1)
            q = q.view(b, t, h, hd).transpose(1, 2)
            kc.index_copy_(2, pos, k.view(b, t, h, hd).transpose(1, 2))
            vc.index_copy_(2, pos, v.view(b, t, h, hd).transpose(1, 2))
            if sdpa is not None:
                y = sdpa(q, kc, vc, attn_mask=mask)
            else:
                s = (q @ kc.transpose(-1, -2)) / math.sqrt(hd)
                s = s.masked_fill(~mask, float("-inf"))
                y = s.softmax(-1) @ vc
            x = x + self.proj(y.transpose(1, 2).reshape(b, t, d))
            return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))

    class Decoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(cfg["vocab_size"], d)
            self.pos = nn.Embedding(max_len, d)
            self.blocks = nn.ModuleList(Block() for _ in range(cfg["num_layers"]))
            self.ln = nn.LayerNorm(d)
            self.head = nn.Linear(d, cfg["vocab_size"], bias=False)
            self.register_buffer("slots", torch.arange(max_len), persistent=False)

        def forward(self, ids, pos, kc, vc):
            x = self.emb(ids) + self.pos(pos)
            mask = self.slots[None, :] <= pos[:, None]  # (t, max_len): causal over the cache
            for i, blk in enumerate(self.blocks):
                x = blk(x, pos, mask, kc[i], vc[i])
            return self.head(self.ln(x[:, -1:]))

    return Decoder()


class HFGenerator:
    """HFGenerator runs transformers' generate on a random-weight Llama, timing each generated
    token with a streamer. compiled uses the static cache and torch.compile of forward;
    kernelized applies kernels.kernelize."""

    backend = "transformers"

    def __init__(self, a, cfg, dtype, variant):
        torch = a.torch
        self.a = a
        transformers = require("transformers", a.name)
        from transformers import AutoModelForCausalLM, LlamaConfig
        from transformers.generation.streamers import BaseStreamer

        self.version = transformers.__version__
        self.cfg = {}
        if a.model_id:
            model, self.weights = load_local(AutoModelForCausalLM, a.model_id, dtype)
            c = model.config
            self.cfg = {"vocab_size": c.vocab_size, "hidden_size": c.hidden_size,
                        "num_layers": c.num_hidden_layers, "num_heads": c.num_attention_heads,
                        "intermediate_size": getattr(c, "intermediate_size", 0)}
        else:
            model = None
        hc = LlamaConfig(vocab_size=cfg["vocab_size"], hidden_size=cfg["hidden_size"],
                         intermediate_size=cfg["intermediate_size"],
                         num_hidden_layers=cfg["num_layers"],
                         num_attention_heads=cfg["num_heads"],
                         num_key_value_heads=cfg["num_heads"],
                         max_position_embeddings=max(2048, a.prompt + a.new),
                         pad_token_id=0, bos_token_id=1, eos_token_id=2)
        if model is None:
            try:  # transformers >= 4.56 calls it dtype and warns about torch_dtype
                model = AutoModelForCausalLM.from_config(hc, dtype=dtype)
            except TypeError:
                model = AutoModelForCausalLM.from_config(hc, torch_dtype=dtype)
        model = model.eval().to(a.dev)
        self.marked = None
        self.kernel_layers = self.kernelizable = None
        self.warnings = []
        if variant == "compiled":
            model.generation_config.cache_implementation = "static"
            # generate's own compilation of forward (transformers >= 4.50 with a static cache)
            # is turned off: the forward compiled here is the one measured. As in generate's
            # own, the prefill runs eagerly (it creates the static cache) and every decode step
            # runs compiled, marked per step (DecodeCompiled).
            model.generation_config.disable_compile = True
            params = dict(a.params)
            params.setdefault("compile_mode", "reduce-overhead")
            eager = model.forward
            self.marked = DecodeCompiled(torch, eager, compile_module(eager, params, a.name))
            model.forward = self.marked
        elif variant == "kernelized":
            model, self.kernel_layers, self.kernelizable, self.warnings = kernelize_model(
                model, a.dev, local_kernels(get(a.params, "local_kernels", "", str)), transformers)
        self.model = model
        sync = a.sync.sync

        class Clock(BaseStreamer):
            def __init__(self):
                self.times = []
                self.prompt_seen = False

            def put(self, value):
                if not self.prompt_seen:  # generate first puts the prompt
                    self.prompt_seen = True
                    return
                sync()
                self.times.append(time.perf_counter_ns())

            def end(self):
                pass

        self.Clock = Clock

    def parameters(self):
        return sum(p.numel() for p in self.model.parameters())

    def generate(self, ids):
        clock = self.Clock()
        mask = self.a.torch.ones_like(ids)
        t0 = time.perf_counter_ns()
        self.model.generate(ids, attention_mask=mask, max_new_tokens=self.a.new,
                            min_new_tokens=self.a.new, do_sample=False, streamer=clock,
                            pad_token_id=0)
        self.a.sync.sync()
        if not clock.times:
            clock.times.append(time.perf_counter_ns())
        return [(t - t0) / 1e6 for t in clock.times]


def local_kernels(spec):
    """local_kernels parses the local_kernels param, LAYER=DIR[,LAYER=DIR], into {LAYER: DIR}."""
    import os

    out = {}
    for part in filter(None, (p.strip() for p in spec.split(","))):
        layer, sep, path = part.partition("=")
        if not sep or not layer.strip() or not path.strip():
            raise BadParams("param local_kernels: %r is not LAYER=DIR (e.g. RMSNorm=/path/to/kernel)"
                            % part)
        if not os.path.isfile(os.path.join(path.strip(), "metadata.json")):
            raise BadParams("param local_kernels: %s (layer %s) holds no metadata.json: not a local "
                            "kernel repository" % (path.strip(), layer.strip()))
        out[layer.strip()] = os.path.abspath(path.strip())
    return out


def replaced_layers(model):
    """replaced_layers counts the modules whose forward kernelize replaced: kernels sets a bound
    forward of the kernel's layer on the instance (also when it falls back, to the class's own)."""
    n = 0
    for m in model.modules():
        f = m.__dict__.get("forward")
        if f is not None and getattr(f, "__func__", f) is not type(m).forward:
            n += 1
    return n


def kernelize_model(model, dev, local, transformers):
    """kernelize_model applies kernels.kernelize to model with transformers' kernel mapping and the
    local kernels ({LAYER: DIR}) over it. It returns (model, layers replaced, layers transformers
    marked as kernelizable, warnings saying why none was replaced)."""
    try:
        import kernels
        from kernels import LocalLayerRepository, Mode, kernelize, use_kernel_mapping
    except ImportError as e:
        raise Unsupported("variant kernelized needs the `kernels` package (%s)" % e)
    from pathlib import Path

    from transformers.utils import import_utils as iu

    warnings = []
    if not iu.is_kernels_available():
        # transformers then leaves its layers unmarked (its hub-kernel decorators are no-ops):
        # kernelize has nothing to replace, on any device.
        warnings.append(
            "kernelized: no layer kernelized: transformers %s uses the kernels package only at "
            "versions >= %s and < %s, and kernels %s is installed, so it marks no layer as "
            "replaceable (requirements.txt pins a pair that works)"
            % (transformers.__version__, getattr(iu, "KERNELS_MIN_VERSION", "?"),
               getattr(iu, "KERNELS_MAX_VERSION", "?"), getattr(kernels, "__version__", "?")))
    names = {}
    for m in model.modules():
        n = getattr(m, "kernel_layer_name", None)
        if n:
            names[n] = names.get(n, 0) + 1
    kernelizable = sum(names.values())
    if iu.is_kernels_available():
        from transformers.integrations.hub_kernels import register_kernel_mapping_transformers

        register_kernel_mapping_transformers()
    unknown = sorted(set(local) - set(names))
    if unknown and kernelizable:
        warnings.append("kernelized: local_kernels names %s, which no layer of this model is marked "
                        "as (marked: %s)" % (", ".join(unknown), ", ".join(sorted(names))))
    mapping = {layer: {dev.type: LocalLayerRepository(repo_path=Path(d), layer_name=layer)}
               for layer, d in local.items()}
    try:
        with use_kernel_mapping(mapping, inherit_mapping=True):
            model = kernelize(model, mode=Mode.INFERENCE, device=dev.type)
    except Exception as e:  # a hub kernel not fetched or not cached, a bad local kernel
        raise Unsupported("kernelize failed on %s: %s" % (dev, e))
    replaced = replaced_layers(model)
    if replaced == 0 and kernelizable:
        warnings.append(
            "kernelized: no layer kernelized: no kernel of the mapping applies on %s to the %d "
            "layers transformers marks (%s), so they keep their own forward (transformers' "
            "mapping has no CPU kernel for them); give local kernels with the local_kernels "
            "param (LAYER=DIR)"
            % (dev.type, kernelizable, ", ".join("%s x%d" % kv for kv in sorted(names.items()))))
    return model, replaced, kernelizable, warnings


def load_local(auto, model_id, dtype):
    """load_local loads model_id's weights from a local directory or the local Hugging Face cache
    only, and returns (model, where the weights came from)."""
    import os

    if os.path.isdir(model_id):
        where = os.path.abspath(model_id)
    else:
        try:
            from huggingface_hub import snapshot_download

            where = snapshot_download(model_id, local_files_only=True)
        except Exception as e:  # not in the cache (LocalEntryNotFoundError), or a bad id
            raise BadParams("param model_id %r: not a local directory and not in the local "
                            "Hugging Face cache (%s); inferbench never downloads weights: save the "
                            "model with save_pretrained or fill the cache first (%s)"
                            % (model_id, os.environ.get("HF_HUB_CACHE") or
                               os.environ.get("HF_HOME") or "~/.cache/huggingface", e)) from None
    try:
        model = auto.from_pretrained(where, dtype=dtype, local_files_only=True)
    except TypeError:
        model = auto.from_pretrained(where, torch_dtype=dtype, local_files_only=True)
    except (OSError, ValueError) as e:
        raise BadParams("param model_id %r: %s holds no loadable causal LM: %s"
                        % (model_id, where, e)) from None
    return model, where


ADAPTER = TorchLLM
