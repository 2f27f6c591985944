"""Hypothesis strategies for JSON values, adversarial ones included."""

from hypothesis import strategies as st

keys = st.text(max_size=12)
scalars = (
    st.none()
    | st.booleans()
    | st.integers()  # unbounded: beyond 64 bits too
    | st.integers(min_value=-(2**63), max_value=2**64 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.sampled_from([0.0, -0.0, 1e300, 5e-324, 0.1, 3.0])
    | st.text(max_size=40)
)
json_values = st.recursive(
    scalars,
    lambda children: st.lists(children, max_size=6) | st.dictionaries(keys, children, max_size=6),
    max_leaves=40,
)
# Python floats JSON cannot write in standard form: the exact path must carry them.
nonfinite = st.sampled_from([float("inf"), float("-inf")])

# Objects keyed by data (ids, names): many distinct keys, each in few objects, so they are maps.
# No NaN: JSON has none, and JavaScript does not keep a NaN's payload bits (the node tests use it).
member = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False),
    st.text(max_size=5),
    st.dictionaries(st.sampled_from(["shape", "location", "min"]), st.integers() | st.text(max_size=3)),
)
keyed = st.lists(
    st.dictionaries(st.text(min_size=1, max_size=6), member, max_size=4), min_size=16, max_size=40
)
