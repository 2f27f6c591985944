"""The learned field-model codec (spec/LEARNED_MODEL.md): models of a message's fields learned
from traffic, coded with a range coder (model format 6; formats 1-5: an exact arithmetic coder).

Modules, leaves first:

- ``_coder``: the coders (format 6's range coder, formats 1-5's exact coder) and the side stream;
- ``_nodes``: the node kinds (what a field's model is, how it codes a value by the general rules
  and on the common path, its tables);
- ``_learner``: the cheapest node per field, priced on the samples;
- ``_format``: the model document's format and the reader that checks every table;
- ``_generate``: the common path of a format 1-5 model as generated code (``_native``: its coder in C);
- ``_walk``: a loaded model's nodes walked in C (``_native``'s ``Program``): the general rules, and
  format 6's common path;
- ``_model``: ``Model``, which puts them together, and ``breakdown`` (bits per field).
"""

from zeroc.learned._model import LEARNED_SAMPLES, Model, breakdown

__all__ = ["LEARNED_SAMPLES", "Model", "breakdown"]
