#!/usr/bin/python3
"""Drives `kiln serve --grpc-port` as a tensorflow-serving-api user does, with Python stubs
generated here from the same .proto files by grpc_tools (Debian's python3-grpc-tools), and checks
each answer against the REST API's answer to the same request on the same server.

    grpc_vs_rest.py --grpc HOST:PORT --rest HOST:PORT --model NAME
                    [--instances FILE.jsonl] [--examples FILE.json] [--regress] [--token TOKEN]

--instances: one instance per line (the row form's); they go as one Predict call, each input a
  TensorProto with tensor_content as tf.make_tensor_proto makes it of a numpy array (string_val
  for text: a model's raw features, as its metadata lists them).
--examples: a JSON list of raw-feature examples for Classify (Regress with --regress), sent as
  tf.Examples (int: int64_list, float: float_list, str: bytes_list).
Prints one JSON report of every check; exits 1 when one fails."""
import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import urllib.error
import urllib.request

PROTO_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "kiln",
                         "serving", "grpc", "proto")


def generate_stubs(out):
    protos = []
    for root, _, files in os.walk(PROTO_DIR):
        protos += [os.path.relpath(os.path.join(root, f), PROTO_DIR) for f in files
                   if f.endswith(".proto")]
    subprocess.run([sys.executable, "-m", "grpc_tools.protoc", "-I", PROTO_DIR,
                    "--python_out", out, "--grpc_python_out", out] + sorted(protos),
                   check=True, cwd=PROTO_DIR)
    sys.path.insert(0, out)


class Checks:
    def __init__(self):
        self.report = {}

    def check(self, name, ok, detail=None):
        self.report[name] = {"ok": bool(ok)} if ok else {"ok": False, "detail": detail}

    def failed(self):
        return [name for name, result in self.report.items() if not result["ok"]]


def rest(address, path, body=None, token=None):
    request = urllib.request.Request("http://%s%s" % (address, path),
                                     data=None if body is None else json.dumps(body).encode())
    if token:
        request.add_header("Authorization", "Bearer " + token)
    try:
        with urllib.request.urlopen(request) as answer:
            return json.loads(answer.read())
    except urllib.error.HTTPError as error:
        return {"http_status": error.code, **json.loads(error.read())}


def close(a, b):
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(close(x, y) for x, y in zip(a, b))
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-7)
    return a == b


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--grpc", required=True)
    parser.add_argument("--rest", required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--instances")
    parser.add_argument("--examples")
    parser.add_argument("--regress", action="store_true")
    parser.add_argument("--token")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as stubs:
        generate_stubs(stubs)
        return check(args)


def check(args):
    import grpc
    import numpy as np
    from google.protobuf import json_format
    from tensorflow.core.example import example_pb2
    from tensorflow_serving.apis import (classification_pb2, get_model_metadata_pb2,
                                         get_model_status_pb2, model_service_pb2_grpc,
                                         predict_pb2, prediction_service_pb2_grpc,
                                         regression_pb2)
    from tensorflow.core.framework import tensor_pb2, types_pb2

    channel = grpc.insecure_channel(args.grpc)
    predictions = prediction_service_pb2_grpc.PredictionServiceStub(channel)
    models = model_service_pb2_grpc.ModelServiceStub(channel)
    metadata = [("authorization", "Bearer " + args.token)] if args.token else None
    checks = Checks()
    base = "/v1/models/" + args.model

    def call(method, request, expect=grpc.StatusCode.OK, with_token=True):
        try:
            return method(request, metadata=metadata if with_token else None), grpc.StatusCode.OK, ""
        except grpc.RpcError as error:
            return None, error.code(), error.details()

    # Status: the versions, newest first, AVAILABLE, as REST lists them.
    request = get_model_status_pb2.GetModelStatusRequest()
    request.model_spec.name = args.model
    answer, code, details = call(models.GetModelStatus, request)
    grpc_status = json_format.MessageToDict(answer, preserving_proto_field_name=True,
                                            including_default_value_fields=True) if answer else {}
    rest_status = rest(args.rest, base, token=args.token)
    checks.check("status equals REST's", code == grpc.StatusCode.OK and
                 grpc_status.get("model_version_status") and grpc_status == rest_status,
                 {"grpc": grpc_status, "rest": rest_status, "code": str(code), "details": details})

    # Metadata: the SignatureDefMap, field for field, as REST's JSON gives it.
    request = get_model_metadata_pb2.GetModelMetadataRequest()
    request.model_spec.name = args.model
    request.metadata_field.append("signature_def")
    answer, code, details = call(predictions.GetModelMetadata, request)
    signature_map = get_model_metadata_pb2.SignatureDefMap()
    if answer:
        answer.metadata["signature_def"].Unpack(signature_map)
    grpc_defs = json_format.MessageToDict(signature_map, preserving_proto_field_name=True,
                                          including_default_value_fields=True)
    rest_meta = rest(args.rest, base + "/metadata", token=args.token)
    rest_defs = rest_meta.get("metadata", {}).get("signature_def", {})
    for signature in rest_defs.get("signature_def", {}).values():
        signature.pop("defaults", None)  # TensorFlow 2.7's SignatureDef has no defaults field
    checks.check("metadata equals REST's", code == grpc.StatusCode.OK and
                 grpc_defs.get("signature_def") and grpc_defs == rest_defs,
                 {"grpc": grpc_defs, "rest": rest_defs, "details": details})
    checks.check("metadata names the version", answer is not None and
                 str(answer.model_spec.version.value) == rest_meta["model_spec"]["version"],
                 str(answer.model_spec if answer else details))
    inputs = signature_map.signature_def["serving_default"].inputs

    if args.instances:
        with open(args.instances) as f:
            instances = [json.loads(line) for line in f if line.strip()]
        request = predict_pb2.PredictRequest()
        request.model_spec.name = args.model
        dtypes = {types_pb2.DT_FLOAT: np.float32, types_pb2.DT_DOUBLE: np.float64,
                  types_pb2.DT_INT32: np.int32, types_pb2.DT_INT64: np.int64}
        for name, info in inputs.items():
            rows = [instance[name] if isinstance(instance, dict) else instance
                    for instance in instances]
            tensor = request.inputs[name]  # as tf.make_tensor_proto(array) writes it
            tensor.dtype = info.dtype
            if info.dtype == types_pb2.DT_STRING:  # a raw feature of text: string_val
                array = np.array([value.encode() for value in rows], dtype=object)
                tensor.string_val.extend(array.tolist())
            else:
                array = np.array(rows, dtype=dtypes[info.dtype])
                tensor.tensor_content = array.tobytes()
            for size in array.shape:
                tensor.tensor_shape.dim.add().size = size
        answer, code, details = call(predictions.Predict, request)
        grpc_outputs = {}
        for name, tensor in (answer.outputs.items() if answer else []):
            values = (list(tensor.float_val) or list(tensor.double_val) or list(tensor.int64_val)
                      or list(tensor.int_val) or [v.decode() for v in tensor.string_val])
            shape = [d.size for d in tensor.tensor_shape.dim]
            grpc_outputs[name] = np.array(values, dtype=object).reshape(shape).tolist()
        rest_answer = rest(args.rest, base + ":predict", {"inputs": {
            name: [instance[name] if isinstance(instance, dict) else instance
                   for instance in instances] for name in inputs}}, token=args.token)
        rest_outputs = rest_answer.get("outputs", {})
        if not isinstance(rest_outputs, dict):
            rest_outputs = {next(iter(grpc_outputs), ""): rest_outputs}
        checks.check("predict equals REST's", code == grpc.StatusCode.OK and grpc_outputs and
                     set(grpc_outputs) == set(rest_outputs) and
                     all(close(grpc_outputs[k], rest_outputs[k]) for k in grpc_outputs),
                     {"grpc": grpc_outputs, "rest": rest_outputs, "details": details})
        checks.check("predict names the signature and version", answer is not None and
                     answer.model_spec.signature_name == "serving_default" and
                     answer.model_spec.version.value > 0, details)

        # A filter, a dtype the signature does not take, and a signature the model lacks.
        request.output_filter.append(next(iter(rest_outputs)))
        answer, code, details = call(predictions.Predict, request)
        checks.check("output_filter keeps one output", answer is not None and
                     list(answer.outputs) == [request.output_filter[0]], details)
        del request.output_filter[:]
        wrong = predict_pb2.PredictRequest()
        wrong.CopyFrom(request)
        for tensor in wrong.inputs.values():
            tensor.dtype = types_pb2.DT_HALF
        _, code, details = call(predictions.Predict, wrong)
        checks.check("DT_HALF is INVALID_ARGUMENT", code == grpc.StatusCode.INVALID_ARGUMENT and
                     "DT_HALF" in details, (str(code), details))
        wrong.CopyFrom(request)
        wrong.model_spec.signature_name = "nope"
        _, code, details = call(predictions.Predict, wrong)
        checks.check("unknown signature is FAILED_PRECONDITION",
                     code == grpc.StatusCode.FAILED_PRECONDITION and
                     details == 'Serving signature key "nope" not found.', (str(code), details))

    if args.examples:
        with open(args.examples) as f:
            examples = json.load(f)
        def example_list(input_proto):
            for features in examples:
                example = input_proto.example_list.examples.add()
                for name, value in features.items():
                    feature = example.features.feature[name]
                    if isinstance(value, str):
                        feature.bytes_list.value.append(value.encode())
                    elif isinstance(value, int):
                        feature.int64_list.value.append(value)
                    else:
                        feature.float_list.value.append(value)
        if not args.regress:
            request = classification_pb2.ClassificationRequest()
            request.model_spec.name = args.model
            example_list(request.input)
            answer, code, details = call(predictions.Classify, request)
            grpc_results = [[[c.label, c.score] for c in result.classes]
                            for result in answer.result.classifications] if answer else []
            rest_results = rest(args.rest, base + ":classify", {"examples": examples},
                                token=args.token).get("results")
            checks.check("classify equals REST's", code == grpc.StatusCode.OK and
                         len(grpc_results) == len(examples) and
                         close(grpc_results, rest_results),
                         {"grpc": grpc_results, "rest": rest_results, "details": details})
        else:
            request = regression_pb2.RegressionRequest()
            request.model_spec.name = args.model
            example_list(request.input)
            answer, code, details = call(predictions.Regress, request)
            grpc_values = [r.value for r in answer.result.regressions] if answer else []
            rest_values = rest(args.rest, base + ":regress", {"examples": examples},
                               token=args.token).get("results")
            checks.check("regress equals REST's", code == grpc.StatusCode.OK and
                         len(grpc_values) == len(examples) and
                         close(grpc_values, rest_values),
                         {"grpc": grpc_values, "rest": rest_values, "details": details})

    # TensorFlow Serving's errors.
    request = get_model_status_pb2.GetModelStatusRequest()
    request.model_spec.name = "no_such_model"
    _, code, details = call(models.GetModelStatus, request)
    checks.check("status of an unknown model is NOT_FOUND", code == grpc.StatusCode.NOT_FOUND and
                 details == "Could not find any versions of model no_such_model", details)
    _, code, details = call(predictions.Predict, predict_pb2.PredictRequest())
    checks.check("no model_spec is INVALID_ARGUMENT", code == grpc.StatusCode.INVALID_ARGUMENT
                 and details == "Missing ModelSpec", details)
    request = get_model_metadata_pb2.GetModelMetadataRequest()
    request.model_spec.name = args.model
    _, code, details = call(predictions.GetModelMetadata, request)
    checks.check("metadata without a field is INVALID_ARGUMENT",
                 code == grpc.StatusCode.INVALID_ARGUMENT and
                 details == "GetModelMetadataRequest must specify at least one metadata_field",
                 details)
    if args.token:
        request = get_model_status_pb2.GetModelStatusRequest()
        request.model_spec.name = args.model
        _, code, details = call(models.GetModelStatus, request, with_token=False)
        checks.check("no token is UNAUTHENTICATED", code == grpc.StatusCode.UNAUTHENTICATED,
                     details)

    print(json.dumps(checks.report, indent=1, default=str))
    return 1 if checks.failed() else 0


if __name__ == "__main__":
    sys.exit(main())
