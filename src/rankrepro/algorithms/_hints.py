"""Memory hints for the compiled loops: a prefetch of one array element's cache line.

A prefetch changes when memory is read, never what is computed: a kernel that uses it gives
the same numbers bit for bit (``tests/test_rankers.py`` checks the Ranking SVM's solver
against a plain Python transcription).  It pays where a loop visits the rows of an array
larger than the caches in an order it knows in advance: the Ranking SVM's dual coordinate
descent on the LETOR folds (367,663 pair rows of 200 bytes, 74 MB, visited in a random
order every pass) waited on memory for about half of each pass.
"""

from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic


def _prefetch_codegen(context, builder, signature, args):
    aryty = signature.args[0]
    ary = context.make_array(aryty)(context, builder, args[0])
    inds = [context.cast(builder, v, t, types.intp) for v, t in zip(args[1:], signature.args[1:])]
    ptr = cgutils.get_item_pointer2(context, builder, data=ary.data, shape=cgutils.unpack_tuple(builder, ary.shape),
                                    strides=cgutils.unpack_tuple(builder, ary.strides), layout=aryty.layout,
                                    inds=inds, wraparound=False, boundscheck=False)
    i8p, i32 = ir.IntType(8).as_pointer(), ir.IntType(32)
    fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32]),
                                        "llvm.prefetch.p0i8")
    # read access, high temporal locality, data cache
    builder.call(fn, [builder.bitcast(ptr, i8p), i32(0), i32(3), i32(1)])
    return context.get_dummy_value()


@intrinsic
def prefetch1(typingctx, arr, i):
    """Prefetch the cache line of ``arr[i]`` (a 1-D array; ``i`` in range, not checked)."""
    if not (isinstance(arr, types.Array) and arr.ndim == 1 and isinstance(i, types.Integer)):
        return None
    return types.void(arr, i), _prefetch_codegen


@intrinsic
def prefetch2(typingctx, arr, i, j):
    """Prefetch the cache line of ``arr[i, j]`` (a 2-D array; indices in range, not checked)."""
    if not (isinstance(arr, types.Array) and arr.ndim == 2 and isinstance(i, types.Integer)
            and isinstance(j, types.Integer)):
        return None
    return types.void(arr, i, j), _prefetch_codegen
