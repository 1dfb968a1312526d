"""picaemu's own fuzzing: targets (``targets``), a fast seeded mutation engine (``mutate``) and hypothesis
strategies (``strategies``) over the same inputs. ``tests/fuzz/test_fuzz.py`` is the short seeded run of the test
suite; ``bench/fuzz.py`` is the long campaign (see docs/fuzzing.md)."""
