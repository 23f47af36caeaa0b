"""torch_vision: torchvision classification models by name, with random weights (never a download).

Params:
  model         torchvision model name: resnet18, resnet50, vit_b_16, ... (default resnet50), or
                vit_ti_16: ViT-Tiny/16 (12 layers, 3 heads, width 192; 5.7M parameters at 224)
                built with torchvision's VisionTransformer
  batch_size    images per iteration (default 1)
  image_size    input height and width (default 224; ViT models are built for that size)
  dtype         float32 | float16 | bfloat16 (default float32)
  device        auto (cuda > mps > cpu) | cpu | cuda | cuda:N | mps (default auto)
  variant       eager | compiled | channels_last | compiled_channels_last (default eager)
  compile_mode  torch.compile mode for compiled variants: default | reduce-overhead | max-autotune
  input         synthetic (default) or a folder of images (jpg, png), decoded and resized at setup
  threads       torch intra-op threads (default: torch's own choice)
  seed          random seed for weights and synthetic input (default 0)

Timing: each iteration is one forward pass under torch.inference_mode; on CUDA it is timed with
CUDA events and synchronised every iteration, on MPS with the clock after torch.mps.synchronize.
Setup reports load_time_ms (build + move to device) and, for compiled variants, compile_time_ms:
the first call's duration minus a steady-state call's.
"""

import os
import time

from .common import (BadParams, TorchAdapter, TorchSync, Unsupported, compile_module, get, require,
                     set_threads, torch_device, torch_dtype)

VARIANTS = ["eager", "compiled", "channels_last", "compiled_channels_last"]
IMAGE_EXTS = (".jpg", ".jpeg", ".png", ".bmp", ".ppm")


class TorchVision(TorchAdapter):
    name = "torch_vision"

    def __init__(self, log):
        super().__init__(log)
        self.tv = require("torchvision", self.name)

    def setup(self, params):
        torch = self.torch
        self.params = params
        set_threads(params)
        name = get(params, "model", "resnet50", str)
        batch = get(params, "batch_size", 1, int)
        size = get(params, "image_size", 224, int)
        variant = get(params, "variant", "eager", str, choices=VARIANTS)
        self.dev = torch_device(get(params, "device", "auto", str))
        dtype = torch_dtype(get(params, "dtype", "float32", str))
        if self.dev.type == "cpu" and dtype == torch.float16:
            self.log.warning("float16 on CPU: many kernels are slow or missing")
        torch.manual_seed(get(params, "seed", 0, int))
        self.default_items = batch
        self.sync = TorchSync(self.dev)

        t0 = time.perf_counter_ns()
        model = build_model(self.tv, name, size)
        model = model.eval().to(self.dev, dtype)
        fmt = torch.contiguous_format
        if "channels_last" in variant:
            fmt = torch.channels_last
            model = model.to(memory_format=fmt)
        self.inputs = [x.to(self.dev, dtype).contiguous(memory_format=fmt)
                       for x in make_inputs(torch, params, batch, size, self.log)]
        self.sync.sync()
        load_ms = (time.perf_counter_ns() - t0) / 1e6

        fn = model
        compile_ms = None
        if variant.startswith("compiled"):
            fn = compile_module(model, params, self.name)
        self.fn = fn
        self.i = 0
        with torch.inference_mode():
            first = self.sync.time(self._call)
            steady = self.sync.time(self._call)
        if variant.startswith("compiled"):
            compile_ms = max(first - steady, 0.0)
        with torch.inference_mode():
            shape = list(fn(self.inputs[0]).shape)
        info = {"model": name, "variant": variant, "dtype": str(dtype).replace("torch.", ""),
                "device": str(self.dev), "batch_size": str(batch), "image_size": str(size),
                "input_shape": "%dx3x%dx%d" % (batch, size, size),
                "parameters": str(sum(p.numel() for p in model.parameters())),
                "input": get(params, "input", "synthetic", str),
                "threads": str(torch.get_num_threads()), "output_shape": str(shape)}
        values = {"first_call_ms": first}
        return {"load_time_ms": load_ms, "compile_time_ms": compile_ms, "info": info,
                "values": values}

    def _call(self):
        x = self.inputs[self.i % len(self.inputs)]
        self.i += 1
        return self.fn(x)

    def run(self, n, rec, warmup):
        torch = self.torch
        lat = rec.latency_ms
        timer = self.sync.time
        call = self._call
        with torch.inference_mode():
            for _ in range(n):
                lat.append(timer(call))

    def teardown(self):
        self.fn = None
        self.inputs = None
        super().teardown()


def build_model(tv, name, size):
    """build_model constructs a torchvision classification model with random weights."""
    models = tv.models
    if name == "vit_ti_16":
        from torchvision.models.vision_transformer import VisionTransformer

        return VisionTransformer(image_size=size, patch_size=16, num_layers=12, num_heads=3,
                                 hidden_dim=192, mlp_dim=768)
    kwargs = {"weights": None}
    if name.startswith("vit_"):
        kwargs["image_size"] = size
    try:
        if hasattr(models, "get_model"):
            return models.get_model(name, **kwargs)
        ctor = getattr(models, name)
    except (ValueError, AttributeError):
        known = sorted(n for n in dir(models) if not n.startswith("_") and n.islower()
                       and callable(getattr(models, n)))
        raise BadParams("param model: %r is not a torchvision model (e.g. %s)"
                        % (name, ", ".join(known[:12]))) from None
    kwargs.pop("weights")
    return ctor(pretrained=False, **kwargs)


def make_inputs(torch, params, batch, size, log):
    """make_inputs returns input batches: random tensors, or images from a folder, resized and
    normalised, cycled to fill the batches."""
    src = get(params, "input", "synthetic", str)
    if src in ("", "synthetic", "random"):
        return [torch.randn(batch, 3, size, size)]
    if not os.path.isdir(src):
        raise BadParams("param input: %r is neither \"synthetic\" nor a folder of images" % src)
    files = sorted(os.path.join(dp, f) for dp, _, fs in os.walk(src) for f in fs
                   if f.lower().endswith(IMAGE_EXTS))
    limit = get(params, "max_images", 256, int)
    files = files[:limit]
    if not files:
        raise BadParams("param input: no images (%s) under %s" % (", ".join(IMAGE_EXTS), src))
    imgs = [load_image(torch, f, size) for f in files]
    mean = torch.tensor([0.485, 0.456, 0.406]).view(3, 1, 1)
    std = torch.tensor([0.229, 0.224, 0.225]).view(3, 1, 1)
    imgs = [(im - mean) / std for im in imgs]
    nb = max(1, len(imgs) // batch)
    out = []
    for b in range(nb):
        chunk = [imgs[(b * batch + j) % len(imgs)] for j in range(batch)]
        out.append(torch.stack(chunk))
    log.info("loaded %d images from %s into %d batches", len(imgs), src, len(out))
    return out


def load_image(torch, path, size):
    """load_image decodes an image to a float tensor in [0, 1] of shape (3, size, size)."""
    import torch.nn.functional as F

    try:
        from torchvision.io import ImageReadMode, read_image

        img = read_image(path, ImageReadMode.RGB)
    except Exception:  # formats torchvision.io cannot read: try PIL
        try:
            from PIL import Image
        except ImportError:
            raise BadParams("cannot decode %s: torchvision.io failed and PIL is absent" % path)
        import numpy as np

        with Image.open(path) as im:
            arr = np.asarray(im.convert("RGB"))
        img = torch.from_numpy(arr.copy()).permute(2, 0, 1)
    img = img.float().unsqueeze(0) / 255.0
    img = F.interpolate(img, size=(size, size), mode="bilinear", align_corners=False)
    return img.squeeze(0)


ADAPTER = TorchVision

__all__ = ["TorchVision", "build_model", "make_inputs", "Unsupported"]
