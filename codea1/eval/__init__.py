"""codea1.eval: code evaluation (pass@k), test evaluation (pass@k, mut@k, Mul, coverage), the mutation
engine, test-time collaboration and generated-test export. Heavy modules are imported lazily by the CLI.

    from codea1.eval.passk import pass_at_k
    from codea1.eval.mutation import generate_mutants, score_mutants
    from codea1.eval.code_eval import evaluate_samples
    from codea1.eval.suite_eval import score_tests
"""
