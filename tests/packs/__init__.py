"""Tests of the evidence plane: pack format, verification, signing, building, serving."""
