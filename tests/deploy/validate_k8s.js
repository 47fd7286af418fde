// Validates Kubernetes objects against the Kubernetes schemas offline, with kubernetes-models
// (no API server needed): reads a JSON array of objects (manifests_check.py converts the YAML),
// validates each with the model class of its apiVersion and kind, and prints one line per object.
//
//   node validate_k8s.js OBJECTS.json            exit 0 when every object is valid
//   node validate_k8s.js --expect_invalid F.json exit 0 when every object is rejected
//
// An object of a kind this script has no model for is an error (never skipped).
"use strict";
const fs = require("fs");

const MODELS = {
  "v1/Namespace": ["kubernetes-models/v1/Namespace", "Namespace"],
  "v1/Service": ["kubernetes-models/v1/Service", "Service"],
  "v1/Secret": ["kubernetes-models/v1/Secret", "Secret"],
  "v1/PersistentVolumeClaim": ["kubernetes-models/v1/PersistentVolumeClaim", "PersistentVolumeClaim"],
  "apps/v1/Deployment": ["kubernetes-models/apps/v1/Deployment", "Deployment"],
  "apps/v1/StatefulSet": ["kubernetes-models/apps/v1/StatefulSet", "StatefulSet"],
  "networking.k8s.io/v1/NetworkPolicy": [
    "kubernetes-models/networking.k8s.io/v1/NetworkPolicy",
    "NetworkPolicy",
  ],
};

function validate(object) {
  const key = `${object.apiVersion}/${object.kind}`;
  const model = MODELS[key];
  if (!model) return `no schema model for ${key}`;
  const Model = require(model[0])[model[1]];
  try {
    new Model(object).validate();
    return null;
  } catch (error) {
    return String(error.message || error);
  }
}

function main(argv) {
  const expectInvalid = argv[0] === "--expect_invalid";
  const file = expectInvalid ? argv[1] : argv[0];
  const objects = JSON.parse(fs.readFileSync(file, "utf8"));
  if (!Array.isArray(objects) || objects.length === 0) {
    console.log(`FAIL: ${file} holds no objects`);
    return 1;
  }
  let failures = 0;
  for (const object of objects) {
    const name = `${object.kind}/${object.metadata && object.metadata.name}`;
    const error = validate(object);
    if (expectInvalid) {
      if (error === null) {
        console.log(`FAIL: ${name} was accepted but is broken`);
        failures++;
      } else {
        console.log(`rejected as expected: ${name}: ${error.slice(0, 200)}`);
      }
    } else if (error !== null) {
      console.log(`FAIL: ${name}: ${error}`);
      failures++;
    } else {
      console.log(`valid: ${name}`);
    }
  }
  return failures === 0 ? 0 : 1;
}

process.exit(main(process.argv.slice(2)));
