"""keyword_spelling (pipeline/keyword_spelling.py) alone: an error that names
a flag with its value reads, for a caller of compile(), as the keyword with
the caller's value; the sentence around it stays as it was."""

from __future__ import annotations

from mdc.pipeline.keyword_spelling import keyword_spelling


def test_a_value_that_ends_the_sentence_leaves_its_full_stop_outside():
    assert keyword_spelling("too small: try --gpu-memory=1000.") == "too small: try gpu_memory=1000."
    assert keyword_spelling("no bound: give --max-dim=N=8.") == "no bound: give max_dims entry 'N=8'."
    assert keyword_spelling("--place=auto. Then") == "place='auto'. Then"


def test_the_callers_value_before_a_full_stop_is_spelt_as_given():
    assert keyword_spelling("bad --gpu-memory=lots.", {"gpu_memory": "lots"}) == "bad gpu_memory='lots'."
    assert keyword_spelling("bad --gpu-memory=32.", {"gpu_memory": 32}) == "bad gpu_memory=32."
    assert (keyword_spelling("then --device=a=local[0]. next", {"devices": ["a=local[0]"]})
            == "then devices entry 'a=local[0]'. next")


def test_dots_that_belong_to_the_value_stay_in_it():
    assert keyword_spelling("--gpu-memory=1.5 is not") == "gpu_memory=1.5 is not"
    assert keyword_spelling("--place=./a.json: no") == "place='./a.json': no"
    assert keyword_spelling("--dump-stages=. is the input's folder") == "dump_stages='.' is the input's folder"
    assert keyword_spelling("--dump-stages=.. is") == "dump_stages='..' is"
    # A value of the caller's own that ends in a dot keeps it.
    assert keyword_spelling("--place=v2. failed", {"place": "v2."}) == "place='v2.' failed"


def test_flags_and_values_without_a_full_stop_are_unchanged():
    assert keyword_spelling("--gpu-memory=lots: expected a size") == "gpu_memory='lots': expected a size"
    assert keyword_spelling("drop --no-manifest.") == "drop manifest=False."
    assert keyword_spelling("--iree-foo=bar.") == "--iree-foo=bar."
