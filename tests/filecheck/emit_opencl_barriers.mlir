// PASS: emit-opencl
// A work-group barrier fences both memories; the barrier analysis's local-fence mark
// (memref_stage/work_group_barriers.py) leaves only __local's; a one-work-item group
// has no one to wait for: a fence.

// CHECK-LABEL: __kernel void group(
// CHECK:       barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
// CHECK-NEXT:  barrier(CLK_LOCAL_MEM_FENCE);
func.func @group(%x: memref<?xf32>) attributes {opencl.local_size = array<i64: 32, 1, 1>} {
  gpu.barrier
  gpu.barrier {opencl.local_fence}
  return
}

// -----

// CHECK-LABEL: __kernel void alone(
// CHECK-NOT:   barrier(
// CHECK:       mem_fence(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
func.func @alone(%x: memref<?xf32>) {
  gpu.barrier
  return
}
