#!/usr/bin/env python3
"""Extract the Kubernetes API subset the stand-in server speaks from the public OpenAPI v2 document.

Usage: extract_subset.py <swagger.json> <api-subset.json>

Keeps the named roots below and every definition they reach through `$ref`, with only what the
validator reads (type, format, required, properties, items, additionalProperties, $ref, enum);
descriptions and the x-kubernetes-* extensions are dropped to keep the file small.
"""
import json
import sys

PREFIXES = {
    "core": "io.k8s.api.core.v1.",
    "batch": "io.k8s.api.batch.v1.",
    "meta": "io.k8s.apimachinery.pkg.apis.meta.v1.",
    "resource": "io.k8s.apimachinery.pkg.api.resource.",
}

ROOTS = {
    "batch": ["Job", "JobSpec", "JobStatus", "JobCondition", "JobList"],
    "core": [
        "PodTemplateSpec", "PodSpec", "Container", "EnvVar", "EnvVarSource", "SecretKeySelector",
        "EnvFromSource", "SecretEnvSource", "ResourceRequirements", "SecurityContext",
        "PodSecurityContext", "SeccompProfile", "Capabilities", "Volume", "VolumeMount",
        "EmptyDirVolumeSource", "SecretVolumeSource", "Pod", "PodList", "PodStatus",
        "PodCondition", "ContainerStatus", "ContainerState", "ContainerStateWaiting",
        "ContainerStateRunning", "ContainerStateTerminated",
    ],
    "meta": [
        "ObjectMeta", "ListMeta", "Status", "StatusDetails", "StatusCause", "DeleteOptions",
        "WatchEvent", "Time",
    ],
    "resource": ["Quantity"],
}

KEEP = ("type", "format", "required", "properties", "items", "additionalProperties", "$ref", "enum")


def slim(schema):
    """The schema with only the keys the validator reads, recursively."""
    if not isinstance(schema, dict):
        return schema
    out = {}
    for key in KEEP:
        if key not in schema:
            continue
        value = schema[key]
        if key == "properties":
            value = {name: slim(prop) for name, prop in sorted(value.items())}
        elif key in ("items", "additionalProperties"):
            value = slim(value)
        out[key] = value
    return out


def refs(schema, found):
    """Every definition name `schema` reaches directly."""
    if isinstance(schema, dict):
        for key, value in schema.items():
            if key == "$ref":
                found.add(value.rsplit("/", 1)[1])
            else:
                refs(value, found)
    elif isinstance(schema, list):
        for value in schema:
            refs(value, found)


def main():
    source, target = sys.argv[1], sys.argv[2]
    with open(source) as f:
        definitions = json.load(f)["definitions"]
    todo = [PREFIXES[group] + name for group, names in ROOTS.items() for name in names]
    kept = {}
    while todo:
        name = todo.pop()
        if name in kept:
            continue
        kept[name] = slim(definitions[name])
        found = set()
        refs(kept[name], found)
        todo.extend(sorted(found - kept.keys()))
    subset = {
        "source": "kubernetes/kubernetes api/openapi-spec/swagger.json, release-1.33",
        "definitions": dict(sorted(kept.items())),
    }
    with open(target, "w") as f:
        json.dump(subset, f, indent=1, sort_keys=False)
        f.write("\n")
    print(f"{len(kept)} definitions written to {target}")


if __name__ == "__main__":
    main()
