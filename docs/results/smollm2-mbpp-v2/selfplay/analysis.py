"""The self-play amendment's measures, run from a checkout of the amendment's commit 339c5c4:
    python analysis.py SELFPLAY_TEST_PASS4.json SELFPLAY_EVAL.json OUT.json [RESULTS_DIR]"""
import json, sys
sys.path.insert(0, "scripts/experiments")
from test_suite_pass import paired
from codea1.eval.stats import paired_difference

R = sys.argv[4] if len(sys.argv) > 4 else "docs/results/smollm2-mbpp-v2"  # the committed results of v2
old = json.load(open(f"{R}/test_pass4.json"))["evaluations"]
new = json.load(open(sys.argv[1]))["evaluations"]["selfplay"]
evals = {m: json.load(open(p)) for m, p in (("base", f"{R}/evals/base/step_0.json"), ("a1", f"{R}/evals/a1/step_114.json"), ("selfplay", sys.argv[2]))}

def show(name, d, scale=100):
    print(f"{name}: {scale*d['delta']:+.2f} [{scale*d['ci95'][0]:+.2f}, {scale*d['ci95'][1]:+.2f}], p = {d['p']:.3f}, paired SE {scale*d['paired_se']:.2f}, problems {d['problems']}")
out = {}
for mode in ("whitebox", "blackbox"):
    for fig in ("pass@4", "valid_ratio"):
        d = paired(old["a1"][mode][fig], new[mode][fig]); out[f"a1-selfplay {mode} {fig}"] = d; show(f"a1 - selfplay, {mode} {fig}", d)
        d = paired(new[mode][fig], old["base"][mode][fig]); out[f"selfplay-base {mode} {fig}"] = d; show(f"selfplay - base, {mode} {fig}", d)
    for m, src in (("a1", old["a1"]), ("selfplay", new), ("base", old["base"])):
        v = src[mode]["pass@4"]; print(f"  {m} {mode} pass@4 mean {100*sum(v.values())/len(v):.2f} ({len(v)} problems), short suites {src[mode]['short_suites']}, mismatches {len(src[mode]['mismatches'])}")
code = {m: e["code"]["per_problem"] for m, e in evals.items()}
for a, b in (("selfplay", "base"), ("selfplay", "a1")):
    d = paired(code[a], code[b]); out[f"code pass@1 {a}-{b}"] = d; show(f"code pass@1 {a} - {b}", d)
for m, e in evals.items():
    print(f"  {m} code pass@1 {100*e['code']['pass@1']:.2f} ci95 {e['code']['ci95']}")
json.dump(out, open(sys.argv[3], "w"), indent=1, sort_keys=True)
