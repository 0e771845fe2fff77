"""`lm_eval --model edgefarm --model_args device=NAME[,backend=...]`: lm-eval's model plugin (docs/lmeval.md).

lm-eval is the user's tool, not a dependency: this module is the only one that imports it, at import
time, and it is loaded only by lm-eval (the `lm_eval.models` entry point in pyproject.toml) or by the
`edgefarm-lm-eval` launcher. Without lm-eval it fails with the install line (`edgefarm[lmeval]`).
No lm-eval release reads the `lm_eval.models` entry points (0.4.13 and 0.5.0.dev1: `get_model` looks up
only lm-eval's own MODEL_MAPPING; discovery from entry points is on its main branch, upstream PR #4013;
docs/lmeval.md cites the lines): `edgefarm-lm-eval ARGS` is lm-eval's own command line with `edgefarm`
registered first.

The requests go to one device through serve/harness.py (the device's runner loaded once, each request a
row of a serve session): loglikelihood and loglikelihood_rolling are the run's --fidelity scoring pass,
rolling in windows (harness.text_windows). Greedy only: the farm's answers are the run's (top_k 1).
"""

from __future__ import annotations

import atexit
from collections.abc import Sequence
from typing import Any

from ..errors import ConfigError

try:
    from lm_eval.api.model import LM
except ImportError as e:  # the plugin without its harness: say how to get it
    raise ConfigError(f"lm-eval is not installed ({e})", where="lm_eval --model edgefarm",
                      fix="pip install 'edgefarm[lmeval]' (lm_eval 0.4.x) in edgefarm's environment") from None  # fmt: skip

from .harness import DeviceHarness, HarnessArgs

NAME = "edgefarm"  # the name lm-eval knows the plugin by (--model edgefarm)
GEN_KWARGS = ("until", "max_gen_toks", "do_sample", "temperature")  # generate_until's keys this plugin reads


def cut_at(text: str, until: Sequence[str]) -> str:
    """The answer up to the first stop string (the runtime has none: cut on the host, as lm-eval's API
    models do)."""
    ends = [i for i in (text.find(u) for u in until if u) if i >= 0]
    return text[: min(ends)] if ends else text


def _torch_device(name: Any) -> bool:
    """lm-eval's own --device names a torch device (default `cuda:0`): not a device of the farm."""
    return name is None or str(name).split(":")[0] in ("cuda", "cpu", "mps", "xpu", "npu", "hpu")


def _until(kwargs: dict[str, Any]) -> list[str]:
    until = kwargs.get("until") or []
    return [until] if isinstance(until, str) else list(until)


class EdgefarmLM(LM):
    """One device of the farm as lm-eval's model."""

    def __init__(
        self, batch_size: int | str = 1, max_batch_size: int | None = None, **model_args: Any
    ) -> None:
        super().__init__()
        if str(batch_size) not in ("1", "auto"):
            raise ConfigError(f"--batch_size {batch_size}: a device answers one request at a time",
                              where="lm_eval --model edgefarm", fix="drop --batch_size (1)")  # fmt: skip
        self.farm = DeviceHarness(HarnessArgs.parse(model_args))
        # lm-eval never ends a model: at exit the runner stops and the session's reports are written
        atexit.register(self.farm.close)

    @classmethod
    def create_from_arg_obj(cls, arg_dict: dict[str, Any], additional_config: dict[str, Any] | None = None):
        """lm-eval passes its own --device (default `cuda:0`) beside --model_args: `device=` in
        --model_args wins; else `--device NAME` names the farm's device; a torch device name is no device."""
        extra = {k: v for k, v in (additional_config or {}).items() if v is not None}
        lm_device = extra.pop("device", None)
        args = dict(arg_dict)
        if not _torch_device(lm_device):
            if args.get("device") not in (None, lm_device):
                raise ConfigError(f"--device {lm_device} and --model_args device={args['device']} differ",
                                  where="lm_eval --model edgefarm", fix="name the device once")  # fmt: skip
            args["device"] = lm_device
        return cls(**args, **extra)

    @classmethod
    def create_from_arg_string(cls, arg_string: str, additional_config: dict[str, Any] | None = None):
        from lm_eval.utils import simple_parse_args_string

        return cls.create_from_arg_obj(simple_parse_args_string(arg_string), additional_config)

    def loglikelihood(self, requests) -> list[tuple[float, bool]]:
        out = []
        for r in requests:
            context, continuation = r.args
            s = self.farm.score(context, continuation)
            out.append((s.logp, s.greedy))
            self.cache_hook.add_partial("loglikelihood", r.args, out[-1])
        return out

    def loglikelihood_rolling(self, requests) -> list[float]:
        out = []
        for r in requests:
            (text,) = r.args
            out.append(self.farm.rolling(text).logp)
            self.cache_hook.add_partial("loglikelihood_rolling", r.args, out[-1])
        return out

    def generate_until(self, requests) -> list[str]:
        out = []
        for r in requests:
            context, kwargs = r.args
            kwargs = dict(kwargs or {})
            if unknown := sorted(set(kwargs) - set(GEN_KWARGS)):
                raise ConfigError(f"generation_kwargs {', '.join(unknown)} are not taken by the farm",
                                  where="lm_eval --model edgefarm",
                                  fix=f"use only {', '.join(GEN_KWARGS)} (docs/lmeval.md)")  # fmt: skip
            if kwargs.get("do_sample") or float(kwargs.get("temperature") or 0) > 0:
                raise ConfigError("sampling asked (do_sample / temperature > 0): the farm answers greedily",
                                  where="lm_eval --model edgefarm", fix="drop do_sample and temperature")  # fmt: skip
            answer = cut_at(self.farm.generate(context, kwargs.get("max_gen_toks")), _until(kwargs))
            out.append(answer)
            self.cache_hook.add_partial("generate_until", r.args, answer)
        return out


def main() -> None:
    """`edgefarm-lm-eval ARGS`: lm-eval's own command line, with `--model edgefarm` registered."""
    import lm_eval.models  # noqa: F401 - lm-eval's own models stay listed beside this one
    from lm_eval.__main__ import cli_evaluate
    from lm_eval.api.registry import model_registry

    if NAME not in model_registry:
        model_registry.register(NAME)(EdgefarmLM)
    cli_evaluate()
