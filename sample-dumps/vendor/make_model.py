"""Write the small ONNX model the vendor scenario loads: y = relu(x @ W + b).

    python make_model.py OUT.onnx

Needs the `onnx` PyPI package (fetch.sh installs the pinned version into a venv).
The weights are fixed, so the file is the same on every run (fetch.sh checks its hash).
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def main() -> None:
    if len(sys.argv) != 2:
        sys.exit("usage: make_model.py OUT.onnx")
    # Weights from a formula, not a random generator, so the bytes never change.
    i = np.arange(64 * 64, dtype=np.int64)
    w = (((i * 7919) % 2003) / 1001.5 - 1.0).astype(np.float32).reshape(64, 64)
    b = (((np.arange(64) * 104729) % 997) / 498.5 - 1.0).astype(np.float32)
    graph = helper.make_graph(
        [
            helper.make_node("MatMul", ["x", "W"], ["xw"]),
            helper.make_node("Add", ["xw", "b"], ["xwb"]),
            helper.make_node("Relu", ["xwb"], ["y"]),
        ],
        "dumptriage_vendor",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 64])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", 64])],
        [numpy_helper.from_array(w, "W"), numpy_helper.from_array(b, "b")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, sys.argv[1])


if __name__ == "__main__":
    main()
