// PASS: work-group-sharing,canonicalize,cse
// CONFIG: work_items=128
// The barrier analysis's fences (work_group_barriers.py): work-items that exchange
// values through a `__local` tile wait at a barrier that fences `__local` memory alone
// (`opencl.local_fence`; the global buffer written after it is not read back); through
// a global buffer the kernel writes and reads, the barrier keeps the global fence.

// CHECK-LABEL: func.func @through_local
// CHECK:       memref.store %{{.*}}, %alloc[%{{.*}}] : memref<256xf32>
// CHECK:       gpu.barrier {opencl.local_fence}
// CHECK:       memref.load %alloc
// CHECK-LABEL: func.func @through_global
// CHECK:       memref.store %{{.*}}, %arg0[%{{.*}}] : memref<?xf32>
// CHECK-NEXT:  }
// CHECK-NEXT:  gpu.barrier{{$}}
// CHECK:       memref.load %arg0

func.func @through_local(%out: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c255 = arith.constant 255 : index
  %c256 = arith.constant 256 : index
  %zero = arith.constant 0.0 : f32
  %t = memref.alloc() : memref<256xf32>
  scf.parallel (%i) = (%c0) to (%c256) step (%c1) {
    %f = arith.index_cast %i : index to i32
    %v = arith.sitofp %f : i32 to f32
    memref.store %v, %t[%i] : memref<256xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c256) step (%c1) {
    %j = arith.subi %c255, %i : index
    %v = memref.load %t[%j] : memref<256xf32>
    memref.store %v, %out[%i] : memref<?xf32>
    scf.reduce
  }
  return
}

func.func @through_global(%a: memref<?xf32>, %b: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c255 = arith.constant 255 : index
  %c256 = arith.constant 256 : index
  scf.parallel (%i) = (%c0) to (%c256) step (%c1) {
    %f = arith.index_cast %i : index to i32
    %v = arith.sitofp %f : i32 to f32
    memref.store %v, %a[%i] : memref<?xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c256) step (%c1) {
    %j = arith.subi %c255, %i : index
    %v = memref.load %a[%j] : memref<?xf32>
    memref.store %v, %b[%i] : memref<?xf32>
    scf.reduce
  }
  return
}
