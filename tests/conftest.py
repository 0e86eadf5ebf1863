"""Hypothesis profiles (see tests/profiles.py): ``ci`` by default, ``HYPOTHESIS_PROFILE=thorough``
for ten times the examples, randomized."""

from tests.profiles import register

register()
