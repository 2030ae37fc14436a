// PASS: spirv-assembly
// The SPIR-V stage's steps after the conversion, in the kernel's spirv.module (the
// `spvasm` stage): a streaming store keeps its Nontemporal operand (nontemporal.py),
// the compare-exchange helper gets its AtomicCompareExchange body (atomics.py), a
// stand-in call becomes its OpenCL.std placeholder op, decorated with the instruction
// number (opencl_std.py: 22, expm1) that the binary then gets.

// CHECK-LABEL: spirv.module @__spv__kernels Physical64 OpenCL
// CHECK:       spirv.func @__atomic_cas_global_f32
// CHECK:         spirv.ConvertUToPtr
// CHECK:         spirv.PtrAccessChain
// CHECK:         spirv.Bitcast %{{.*}} : !spirv.ptr<f32, CrossWorkgroup> to !spirv.ptr<i32, CrossWorkgroup>
// CHECK:         spirv.AtomicCompareExchange <Device> <None> <None>
// CHECK:       spirv.func @k
// CHECK:         spirv.CL.exp %{{.*}} : f32 {location = 22 : i32}
// CHECK:         spirv.Store "CrossWorkgroup" %{{.*}}, %{{.*}} ["Aligned|Nontemporal", 4] : vector<4xf32>
// CHECK:         spirv.FunctionCall @__atomic_cas_global_f32
// CHECK:       spirv.EntryPoint "Kernel" @k
// CHECK-NOT:   opencl_std_
func.func @k(%x: memref<?xf32>, %i: index) {
  %v = vector.load %x[%i] : memref<?xf32>, vector<4xf32>
  %s = memref.load %x[%i] : memref<?xf32>
  %e = math.expm1 %s : f32
  vector.store %v, %x[%i] {nontemporal = true} : memref<?xf32>, vector<4xf32>
  %o = memref.atomic_rmw addf %e, %x[%i] : (f32, memref<?xf32>) -> f32
  return
}

// -----

// A plain store stays plain.

// CHECK-LABEL: spirv.module
// CHECK:       spirv.Store "CrossWorkgroup" %{{.*}}, %{{.*}} ["Aligned", 4] : vector<4xf32>
// CHECK-NOT:   Nontemporal
func.func @plain(%x: memref<?xf32>, %i: index) {
  %v = vector.load %x[%i] : memref<?xf32>, vector<4xf32>
  vector.store %v, %x[%i] : memref<?xf32>, vector<4xf32>
  return
}
