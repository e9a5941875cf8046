"""codea1.recipes: whole jobs built from the rooms below, each one function a command calls.

- ``compare``: methods trained from one start on one committed training list and evaluated on one
  held-out set, with paired intervals (`codea1 compare`);
- ``demo``: the offline demo on the bundled SmolLM2-135M (`codea1 demo`);
- ``export``: a run's policy as a plain transformers model directory (`codea1 export`).
The run report stays with the run it reads (codea1.train.report): the loop rewrites it at each checkpoint.
"""
