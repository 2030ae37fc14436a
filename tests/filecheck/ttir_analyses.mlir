// PASS: ttir-to-linalg
// The TTIR analyses (ttir_to_linalg/analysis.py) as the Linalg they choose: pointer
// offsets that are affine in the program id and tl.arange become one strided view of
// the buffer (affine_of), and a mask `offs < n` becomes the extent of a box,
// clamp(n - start, 0, BLOCK) (box_from_compare), instead of per-element selects.

// CHECK-LABEL: func.func @masked_copy
// CHECK-SAME: (%[[X:[^:]*]]: memref<?xf32>{{.*}}, %[[OUT:[^:]*]]: memref<?xf32>{{.*}}, %[[N:[^:]*]]: i32
// CHECK:   %[[START32:.*]] = arith.muli %{{.*}}, %c16_i32 : i32
// CHECK:   %[[START:.*]] = arith.index_cast %[[START32]] : i32 to index
// CHECK:   %[[NI:.*]] = arith.index_cast %[[N]] : i32 to index
// CHECK:   %[[LEFT:.*]] = arith.subi %[[NI]], %[[START]] : index
// CHECK:   %[[XV:.*]] = memref.reinterpret_cast %[[X]] to offset: [%[[START]]], sizes: [16], strides: [1]
// CHECK:   %[[LOW:.*]] = arith.maxsi %[[LEFT]], %c0
// CHECK:   %[[EXTENT:.*]] = arith.minsi %[[LOW]], %c16
// CHECK:   %[[PART:.*]] = memref.subview %[[XV]][0] [%[[EXTENT]]] [1]
// CHECK:   memref.copy %[[PART]]
// CHECK:   %[[OV:.*]] = memref.reinterpret_cast %[[OUT]] to offset: [%[[START]]], sizes: [16], strides: [1]
// CHECK:   %[[LOW2:.*]] = arith.maxsi %[[LEFT]], %{{.*}}
// CHECK:   %[[EXTENT2:.*]] = arith.minsi %[[LOW2]], %{{.*}}
// CHECK:   memref.subview %[[OV]][0] [%[[EXTENT2]]] [1]
// CHECK-NOT: arith.select
// CHECK:   return
module {
  tt.func public @masked_copy(%x_ptr: !tt.ptr<f32>, %out_ptr: !tt.ptr<f32>, %n: i32) {
    %other = arith.constant dense<0.000000e+00> : tensor<16xf32>
    %block = arith.constant 16 : i32
    %pid = tt.get_program_id x : i32
    %start = arith.muli %pid, %block : i32
    %range = tt.make_range {end = 16 : i32, start = 0 : i32} : tensor<16xi32>
    %starts = tt.splat %start : i32 -> tensor<16xi32>
    %offs = arith.addi %starts, %range : tensor<16xi32>
    %ns = tt.splat %n : i32 -> tensor<16xi32>
    %mask = arith.cmpi slt, %offs, %ns : tensor<16xi32>
    %out_base = tt.splat %out_ptr : !tt.ptr<f32> -> tensor<16x!tt.ptr<f32>>
    %out_ptrs = tt.addptr %out_base, %offs : tensor<16x!tt.ptr<f32>>, tensor<16xi32>
    %x_base = tt.splat %x_ptr : !tt.ptr<f32> -> tensor<16x!tt.ptr<f32>>
    %x_ptrs = tt.addptr %x_base, %offs : tensor<16x!tt.ptr<f32>>, tensor<16xi32>
    %x = tt.load %x_ptrs, %mask, %other : tensor<16x!tt.ptr<f32>>
    tt.store %out_ptrs, %x, %mask : tensor<16x!tt.ptr<f32>>
    tt.return
  }
}

// -----

// offs * 3 is affine too: a view with stride 3, no gather.
// CHECK-LABEL: func.func @strided_load
// CHECK-SAME: (%[[X:[^:]*]]: memref<?xf32>
// CHECK:   memref.reinterpret_cast %[[X]] to offset: [{{.*}}], sizes: [8], strides: [3]
// CHECK-NOT: tensor.extract %
// CHECK:   return
module {
  tt.func public @strided_load(%x_ptr: !tt.ptr<f32>, %out_ptr: !tt.ptr<f32>) {
    %three = arith.constant dense<3> : tensor<8xi32>
    %range = tt.make_range {end = 8 : i32, start = 0 : i32} : tensor<8xi32>
    %offs = arith.muli %range, %three : tensor<8xi32>
    %x_base = tt.splat %x_ptr : !tt.ptr<f32> -> tensor<8x!tt.ptr<f32>>
    %x_ptrs = tt.addptr %x_base, %offs : tensor<8x!tt.ptr<f32>>, tensor<8xi32>
    %x = tt.load %x_ptrs : tensor<8x!tt.ptr<f32>>
    %out_base = tt.splat %out_ptr : !tt.ptr<f32> -> tensor<8x!tt.ptr<f32>>
    %out_ptrs = tt.addptr %out_base, %range : tensor<8x!tt.ptr<f32>>, tensor<8xi32>
    tt.store %out_ptrs, %x : tensor<8x!tt.ptr<f32>>
    tt.return
  }
}
