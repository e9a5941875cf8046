"""codea1's judge and sandbox as a reward for trainers people already use (imported lazily, optional).

- `judge`: `CodeJudge`, the trainer-agnostic core: completions scored against a problem's own tests
  (EvalPlus, HumanEval, golden asserts) in the sandbox, one executor call per batch, verdicts decided by
  codea1.judge outside the candidate's process; and `game_rewards`, R_C of Code-A1's game against tests
  another model wrote (validated against GT first).
- `trl`: reward functions in the form TRL's `GRPOTrainer` calls (`code_reward`, `game_reward`).
- `verl`: `compute_score` / `compute_score_batch` in the forms verl's reward managers call.
docs/integrations.md has a short example for each.
"""
