"""Cold start of a small model: does the response prefix, and a supervised warm-up (`codea1 sft`), make
the Test LLM write valid suites and the Code LLM pass more tests?

On held-out problems (eval.problems, default bundled:eval) it measures, for the base model and for the
SFT model:
- the Test LLM with and without the test role's response prefix: white-box prompt with the GT as the
  candidate, generation.test sampling (the rows without prefix also drop generation.test.stop, as a
  config without the cold-start settings samples), scored by the game itself (codea1.game.play_step
  with the GT as the code): mean valid_ratio of the suites, asserts the parser reads per response,
  and oracle-validated tests per response;
- the Code LLM's pass rate on the golden tests with the eval sampling (codea1.eval.policy_eval.evaluate_code,
  as the demo measures it).

    PYTHONPATH=. python benchmarks/cold_start.py --config codea1/configs/smollm2-cpu.yaml \\
        --sft-dir runs/sft-smollm2 --limit 16 --n 4

Without --sft-dir (or when it does not exist yet) the warm-up is run first with the config's sft
section and written there (default runs/sft-cold-start). Prints a Markdown table; --json writes it too.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


class Sampler:
    """A model that samples like a policy (`generate(prompts, GenerationConfig)`) without log-probs."""

    def __init__(self, name: str):
        from codea1.inference.rollout import TransformersRollout
        from codea1.models import load_model_and_tokenizer

        self.model, self.tokenizer = load_model_and_tokenizer(name)
        self.rollout = TransformersRollout(self.model, self.tokenizer)

    def generate(self, prompts: list, gen: Any) -> list:
        return self.rollout.generate(prompts, gen)


def test_role(
    sampler: Sampler, problems: list, executor: Any, cfg: Any, sampling: Any, n: int, seed: int
) -> dict[str, float]:
    """The Test LLM on white-box prompts showing the GT: valid ratio, parsed asserts and valid tests per
    response, scored by the game."""
    from codea1.game import parse_test_suite, play_step
    from codea1.game.prompts import test_messages, with_prefix
    from codea1.inference.rollout import GenerationConfig
    from codea1.train.sft import code_answer

    prompts = [with_prefix(test_messages(p, p.gt_solution, cfg.game), sampling.response_prefix, p) for p in problems]
    start = time.perf_counter()
    rows = sampler.generate(prompts, GenerationConfig.of(sampling, n=n, seed=seed))
    seconds = time.perf_counter() - start
    texts = [[s.text for s in row] for row in rows]
    results = play_step(
        problems, [[code_answer(p)] for p in problems], [[row] for row in texts], executor, config=cfg.game
    )
    suites = [s for r in results for s in r.codes[0].suites]
    parsed = [
        len(parse_test_suite(t, p.entry_point, cfg.game.max_tests_per_suite, cfg.game.test_validity).tests)
        for p, row in zip(problems, texts, strict=False)
        for t in row
    ]
    return {
        "valid_ratio": sum(s.valid_ratio for s in suites) / len(suites),
        "asserts": sum(parsed) / len(parsed),
        "valid_tests": sum(s.valid_tests for s in suites) / len(suites),
        "any_valid": sum(s.valid_tests > 0 for s in suites) / len(suites),
        "seconds": seconds,
        "example": texts[0][0],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", type=Path, default=ROOT / "codea1" / "configs" / "smollm2-cpu.yaml")
    parser.add_argument(
        "--sft-dir",
        type=Path,
        default=Path("runs/sft-cold-start"),
        help="output of `codea1 sft` (run first when missing)",
    )
    parser.add_argument("--problems", default=None, help="held-out problems (default: eval.problems)")
    parser.add_argument("--limit", type=int, default=16, help="held-out problems used")
    parser.add_argument("--n", type=int, default=4, help="test responses per problem")
    parser.add_argument("--code-n", type=int, default=2, help="code samples per problem")
    parser.add_argument("--no-sft-plain", action="store_true", help="skip the SFT row without prefix")
    parser.add_argument("--json", type=Path, help="also write the numbers here")
    parser.add_argument("overrides", nargs="*", metavar="key=value", help="config overrides")
    args = parser.parse_args()

    import torch

    from codea1.config import load_config
    from codea1.data import load_problems
    from codea1.eval.policy_eval import EvalPlan, evaluate_code
    from codea1.train.loop import make_executor
    from codea1.train.sft import SHARED, run_sft

    cfg = load_config(args.config, args.overrides)
    cfg = dataclasses.replace(cfg, eval=dataclasses.replace(cfg.eval, n_samples=args.code_n))
    if not cfg.generation.test.response_prefix:
        raise SystemExit("the config sets no generation.test.response_prefix to compare with")
    torch.manual_seed(cfg.seed)
    problems = load_problems(args.problems or cfg.eval.problems)[: args.limit]
    with_prefix = cfg.generation.test
    without = dataclasses.replace(with_prefix, response_prefix="", stop=[])

    t0 = time.perf_counter()
    summary_path = args.sft_dir / "sft.json"
    if not summary_path.is_file():
        print(f"running codea1 sft into {args.sft_dir} ...", file=sys.stderr)
        run_sft(cfg, args.sft_dir, progress=False)
    sft = json.loads(summary_path.read_text())
    sft_test = sft["models"].get(SHARED) or sft["models"].get("test")
    sft_code = sft["models"].get(SHARED) or sft["models"].get("code")

    rows, code = [], {}
    with make_executor(cfg) as executor:
        plan = [
            ("base", cfg.test_model_name, without),
            ("base", cfg.test_model_name, with_prefix),
            ("sft", sft_test, with_prefix),
        ]
        if not args.no_sft_plain:
            plan.append(("sft", sft_test, without))
        loaded: dict[str, Sampler] = {}
        for label, name, sampling in plan:
            if name is None:
                continue
            if name not in loaded:
                loaded.clear()
                loaded[name] = Sampler(name)
            print(f"{label} model, prefix {sampling.response_prefix!r}: sampling tests ...", file=sys.stderr)
            out = test_role(loaded[name], problems, executor, cfg, sampling, args.n, cfg.seed + 1)
            rows.append({"model": label, "prefix": sampling.response_prefix, **out})
            print(
                f"  valid ratio {out['valid_ratio']:.3f}, asserts {out['asserts']:.2f}, valid tests "
                f"{out['valid_tests']:.2f} ({out['seconds']:.0f} s)",
                file=sys.stderr,
            )
        for label, name in (("base", cfg.model.code_model), ("sft", sft_code)):
            if name is None:
                continue
            if name not in loaded:
                loaded.clear()
                loaded[name] = Sampler(name)
            print(f"{label} model: sampling code ...", file=sys.stderr)
            spec = EvalPlan(code_samples=cfg.eval.n_samples, seed=cfg.seed, bootstrap=10)
            code[label] = evaluate_code(loaded[name], problems, executor, cfg, spec)["pass@1"]
            print(f"  pass rate {code[label]:.3f}", file=sys.stderr)

    n_problems = len(problems)
    sft_dir_name = args.sft_dir.name

    def fmt(losses: dict[str, float]) -> str:
        return ", ".join(f"{k} {v:.3f}" for k, v in losses.items())

    print(
        f"\n{n_problems} problems of {args.problems or cfg.eval.problems}; Test LLM: {args.n} responses per "
        f"problem, temperature {with_prefix.temperature}, max_new_tokens {with_prefix.max_new_tokens}, "
        f"{cfg.game.tests_requested} tests requested.\nSFT ({sft_dir_name}): {sft['examples']} examples, "
        f"settings {sft.get('sft')}, loss {fmt(sft['loss_before'])} -> {fmt(sft['loss_after'])}\n"
    )
    print(
        "| Test LLM | response prefix | valid ratio | asserts parsed / response | valid tests / response "
        "| responses with a valid test |"
    )
    print("|---|---|---|---|---|---|")
    for r in rows:
        prefix = json.dumps(r["prefix"]).replace("`", "\\`") if r["prefix"] else "none"
        print(
            f"| {r['model']} | {prefix} | {r['valid_ratio']:.3f} | {r['asserts']:.2f} | {r['valid_tests']:.2f} "
            f"| {r['any_valid']:.2f} |"
        )
    print(
        f"\nCode LLM pass rate on the golden tests ({args.code_n} samples per problem, temperature "
        f"{cfg.eval.temperature}, max_new_tokens {cfg.eval.max_new_tokens}):\n"
    )
    print("| Code LLM | pass rate |")
    print("|---|---|")
    for label, rate in code.items():
        print(f"| {label} | {rate:.3f} |")
    print(f"\n({time.perf_counter() - t0:.0f} s in all)")
    if args.json:
        args.json.write_text(json.dumps({"tests": rows, "code": code, "sft": sft}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
