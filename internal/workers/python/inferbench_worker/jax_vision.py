"""jax_vision: ResNet-50 and ViT-B/16 in JAX with flax.linen, random weights, jit-compiled.

Params: model (resnet50 | vit_b_16 | resnet18), batch_size, image_size (224), dtype
(float32 | float16 | bfloat16), device (auto | cpu | gpu | tpu), seed.

Setup reports load_time_ms (init of the parameters), compile_time_ms and compilation_time_ms
(the jit's lower + compile, done ahead of time so the first timed call is steady state).
Each iteration is timed around the call and block_until_ready.

Written against flax.linen; CI runs it on CPU with the versions pinned in requirements.txt
(internal/workers/python/tests/test_frameworks.py). Setup's info has output_shape and parameters.
"""

import time

from .common import Adapter, BadParams, Unsupported, get, peak_rss_mb, require

MODELS = ["resnet18", "resnet50", "vit_b_16"]


class JaxVision(Adapter):
    name = "jax_vision"
    framework = "jax"

    def __init__(self, log):
        super().__init__(log)
        self.jax = require("jax", self.name)
        self.flax = require("flax", self.name)
        self.dev = None

    def versions(self):
        out = {"jax": self.jax.__version__, "flax": getattr(self.flax, "__version__", "?")}
        try:
            import jaxlib

            out["jaxlib"] = jaxlib.__version__
        except ImportError:
            pass
        return out

    def device(self):
        if self.dev is not None:
            return "%s:%d" % (self.dev.platform, self.dev.id)
        d = self.jax.devices()[0]
        return "%s:%d" % (d.platform, d.id)

    def setup(self, params):
        jax = self.jax
        jnp = jax.numpy
        self.params = params
        name = get(params, "model", "resnet50", str, choices=MODELS)
        batch = get(params, "batch_size", 1, int)
        size = get(params, "image_size", 224, int)
        dtypes = {"float32": jnp.float32, "float16": jnp.float16, "bfloat16": jnp.bfloat16}
        dname = get(params, "dtype", "float32", str)
        if dname not in dtypes:
            raise BadParams("param dtype: %r is not one of %s" % (dname, ", ".join(dtypes)))
        dtype = dtypes[dname]
        want = get(params, "device", "auto", str)
        if want == "auto":
            self.dev = jax.devices()[0]
        else:
            plat = {"cuda": "gpu"}.get(want.split(":")[0], want.split(":")[0])
            try:
                devs = jax.devices(plat)
            except RuntimeError as e:
                raise Unsupported("device %s not available to jax: %s" % (want, e))
            idx = int(want.split(":")[1]) if ":" in want else 0
            self.dev = devs[idx]
        variant = get(params, "variant", "compiled", str)
        if variant not in ("compiled", "eager", "jit"):
            raise Unsupported("jax_vision has variants compiled (jit) and eager, not %r" % variant)
        self.default_items = batch
        model = build(self.flax, jnp, name, dtype)

        t0 = time.perf_counter_ns()
        key = jax.random.PRNGKey(get(params, "seed", 0, int))
        x = jax.device_put(jnp.ones((batch, size, size, 3), dtype), self.dev)
        variables = jax.jit(model.init)(key, x)
        variables = jax.device_put(variables, self.dev)
        jax.block_until_ready(variables)
        load_ms = (time.perf_counter_ns() - t0) / 1e6

        def apply(v, x):
            return model.apply(v, x)

        compile_ms = None
        if variant == "eager":
            with jax.disable_jit():
                self.fn = lambda: apply(variables, x)
                jax.block_until_ready(self.fn())
        else:
            t0 = time.perf_counter_ns()
            compiled = jax.jit(apply).lower(variables, x).compile()
            compile_ms = (time.perf_counter_ns() - t0) / 1e6
            self.fn = lambda: compiled(variables, x)
            jax.block_until_ready(self.fn())
        self.eager = variant == "eager"
        if self.eager:
            with jax.disable_jit():
                out = self.fn()
        else:
            out = self.fn()
        info = {"model": name, "variant": variant, "dtype": dname, "device": self.device(),
                "batch_size": str(batch), "image_size": str(size),
                "input_shape": "%dx%dx%dx3" % (batch, size, size),
                "output_shape": str(list(out.shape)),
                "parameters": str(sum(int(a.size) for a in jax.tree_util.tree_leaves(variables)))}
        values = {}
        if compile_ms is not None:
            values["compilation_time_ms"] = compile_ms
        return {"load_time_ms": load_ms, "compile_time_ms": compile_ms, "info": info,
                "values": values}

    def run(self, n, rec, warmup):
        jax = self.jax
        fn = self.fn
        block = jax.block_until_ready
        pc = time.perf_counter_ns
        lat = rec.latency_ms
        ctx = jax.disable_jit() if self.eager else _null()
        with ctx:
            for _ in range(n):
                t0 = pc()
                block(fn())
                lat.append((pc() - t0) / 1e6)

    def values(self):
        out = {"memory_mb": peak_rss_mb()}
        stats = getattr(self.dev, "memory_stats", None)
        if stats is not None:
            try:
                s = stats() or {}
                if "peak_bytes_in_use" in s:
                    out["gpu_memory_mb"] = s["peak_bytes_in_use"] / 2**20
            except Exception:  # CPU devices have no memory stats
                pass
        return out


class _null:
    def __enter__(self):
        return self

    def __exit__(self, *a):
        return False


def build(flax, jnp, name, dtype):
    """build returns a flax.linen module for the named model."""
    import flax.linen as nn

    class Bottleneck(nn.Module):
        features: int
        strides: int = 1
        basic: bool = False

        @nn.compact
        def __call__(self, x):
            conv = lambda f, k, s=1: nn.Conv(f, (k, k), (s, s), padding="SAME", use_bias=False,
                                             dtype=dtype)
            norm = lambda: nn.BatchNorm(use_running_average=True, dtype=dtype)
            r = x
            if self.basic:
                y = nn.relu(norm()(conv(self.features, 3, self.strides)(x)))
                y = norm()(conv(self.features, 3)(y))
                out = self.features
            else:
                y = nn.relu(norm()(conv(self.features, 1)(x)))
                y = nn.relu(norm()(conv(self.features, 3, self.strides)(y)))
                y = norm()(conv(self.features * 4, 1)(y))
                out = self.features * 4
            if r.shape[-1] != out or self.strides != 1:
                r = norm()(conv(out, 1, self.strides)(r))
            return nn.relu(y + r)

    class ResNet(nn.Module):
        stages: tuple
        basic: bool = False

        @nn.compact
        def __call__(self, x):
            x = nn.Conv(64, (7, 7), (2, 2), padding=[(3, 3), (3, 3)], use_bias=False,
                        dtype=dtype)(x)
            x = nn.relu(nn.BatchNorm(use_running_average=True, dtype=dtype)(x))
            x = nn.max_pool(x, (3, 3), (2, 2), padding="SAME")
            for i, blocks in enumerate(self.stages):
                for j in range(blocks):
                    x = Bottleneck(64 * 2**i, 2 if (i > 0 and j == 0) else 1, self.basic)(x)
            x = jnp.mean(x, axis=(1, 2))
            return nn.Dense(1000, dtype=dtype)(x)

    class Encoder(nn.Module):
        @nn.compact
        def __call__(self, x):
            y = nn.LayerNorm(dtype=dtype)(x)
            y = nn.MultiHeadDotProductAttention(num_heads=12, dtype=dtype)(y, y)
            x = x + y
            y = nn.LayerNorm(dtype=dtype)(x)
            y = nn.Dense(3072, dtype=dtype)(y)
            y = nn.Dense(768, dtype=dtype)(nn.gelu(y))
            return x + y

    class ViT(nn.Module):
        @nn.compact
        def __call__(self, x):
            x = nn.Conv(768, (16, 16), (16, 16), padding="VALID", dtype=dtype)(x)
            b, h, w, c = x.shape
            x = x.reshape(b, h * w, c)
            cls = self.param("cls", nn.initializers.zeros, (1, 1, c))
            x = jnp.concatenate([jnp.broadcast_to(cls, (b, 1, c)).astype(x.dtype), x], axis=1)
            pos = self.param("pos", nn.initializers.normal(0.02), (1, h * w + 1, c))
            x = x + pos.astype(x.dtype)
            for _ in range(12):
                x = Encoder()(x)
            x = nn.LayerNorm(dtype=dtype)(x[:, 0])
            return nn.Dense(1000, dtype=dtype)(x)

    if name == "resnet50":
        return ResNet((3, 4, 6, 3))
    if name == "resnet18":
        return ResNet((2, 2, 2, 2), basic=True)
    return ViT()


ADAPTER = JaxVision
