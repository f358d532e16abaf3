"""TFLM's signal library (``signal/micro/kernels``): the custom ops of audio front ends.

The pinned wheel's ``PythonOpsResolver`` registers fourteen of them under their TensorFlow op
names (``SignalWindow``, ``SignalRfft``, ...). Each module here ports one kernel file: the
allocation behaviour of its Init/Prepare (OpData, persistent state in the tail, scratch) and
the arithmetic of ``signal/src`` it calls. Options come from the op's flexbuffer custom
options (``_common.FlexOptions``); state that TFLM keeps in persistent buffers between invokes
(circular buffers, noise estimates, overlap-add tails) lives in persistent workspaces.
"""
