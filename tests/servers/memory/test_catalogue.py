"""The published tool contract: every tool, property and annotation is there and honest."""

from __future__ import annotations

import pytest
from jsonschema import Draft202012Validator

from affidavit.servers.memory.catalogue import INSTRUCTIONS, catalogue

TOOLS = {
    "memory_store",
    "memory_store_many",
    "memory_search",
    "memory_get",
    "memory_recent",
    "memory_forget",
    "memory_link",
    "memory_relations",
    "memory_unlink",
    "memory_list_namespaces",
    "memory_status",
    "memory_lock",
    "memory_unlock",
    "memory_selftest",
}
SPECS = {spec.name: spec for spec in catalogue()}


def _properties(schema):
    """Every property schema, nested ones included (facts[].text ...)."""
    for name, prop in schema.get("properties", {}).items():
        yield name, prop
        if prop.get("type") == "array" and "properties" in prop.get("items", {}):
            yield from _properties(prop["items"])


def test_the_catalogue_is_these_tools():
    assert set(SPECS) == TOOLS


@pytest.mark.parametrize("name", sorted(TOOLS))
def test_every_input_property_has_description_type_and_closed_objects(name):
    schema = SPECS[name].input_schema
    Draft202012Validator.check_schema(schema)
    Draft202012Validator.check_schema(SPECS[name].output_schema)
    assert schema["additionalProperties"] is False
    for prop_name, prop in _properties(schema):
        assert prop.get("description"), (name, prop_name)
        for alternative in prop.get("anyOf", [prop]):  # a date or a unix time: both bounded
            assert alternative.get("type"), (name, prop_name)
            if alternative["type"] == "string" and prop_name not in {"kind"}:
                assert "maxLength" in alternative or "pattern" in alternative, (name, prop_name)
            if alternative["type"] in {"integer", "number"}:
                assert "minimum" in alternative and "maximum" in alternative, (name, prop_name)


def test_optional_properties_with_a_fixed_default_declare_it():
    store = SPECS["memory_store"].input_schema["properties"]
    assert store["importance"]["default"] == 0.5
    assert store["kind"]["default"] == "fact"
    assert store["quarantined"]["default"] is False
    assert SPECS["memory_recent"].input_schema["properties"]["limit"]["default"] == 10
    assert SPECS["memory_forget"].input_schema["properties"]["shred"]["default"] is False


def test_annotations_are_true_to_behaviour():
    read_only = {n for n, s in SPECS.items() if s.read_only}
    assert read_only == {
        "memory_search",
        "memory_get",
        "memory_recent",
        "memory_relations",
        "memory_list_namespaces",
        "memory_status",
        "memory_selftest",
    }
    assert {n for n, s in SPECS.items() if s.destructive} == {"memory_forget", "memory_unlink"}
    assert not any(s.read_only and s.destructive for s in SPECS.values())


@pytest.mark.parametrize(
    ("tool", "siblings"),
    [
        ("memory_search", ["memory_recent", "memory_get", "memory_relations"]),
        ("memory_recent", ["memory_search"]),
        ("memory_get", ["memory_search"]),
        ("memory_status", ["memory_selftest"]),
        ("memory_selftest", ["memory_status"]),
        ("memory_forget", ["memory_unlink", "supersedes"]),
        ("memory_unlink", ["memory_forget"]),
        ("memory_store", ["memory_store_many", "memory_link"]),
        ("memory_store_many", ["memory_store"]),
        ("memory_link", ["memory_relations", "memory_store"]),
        ("memory_unlock", ["affidavit unlock"]),
    ],
)
def test_descriptions_say_which_sibling_to_prefer(tool, siblings):
    for sibling in siblings:
        assert sibling in SPECS[tool].description


def test_instructions_ask_to_search_first_and_store_durable_facts():
    assert "memory_search" in INSTRUCTIONS and "memory_store" in INSTRUCTIONS
    assert "not instructions" in INSTRUCTIONS
