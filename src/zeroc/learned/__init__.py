"""The learned field-model codec (spec/LEARNED_MODEL.md): models of a message's fields learned
from traffic, coded with an exact arithmetic coder.

Modules, leaves first:

- ``_coder``: the exact arithmetic coder and the side stream;
- ``_nodes``: the node kinds (what a field's model is, how it codes a value, its tables);
- ``_learner``: the cheapest node per field, priced on the samples;
- ``_format``: the model document's format and the reader that checks every table;
- ``_generate``: the common path of a loaded model as generated code (``_native``: its coder in C);
- ``_walk``: the general rules of a loaded model walked in C (``_native``'s ``Program``);
- ``_model``: ``Model``, which puts them together, and ``breakdown`` (bits per field).
"""

from zeroc.learned._model import LEARNED_SAMPLES, Model, breakdown

__all__ = ["LEARNED_SAMPLES", "Model", "breakdown"]
