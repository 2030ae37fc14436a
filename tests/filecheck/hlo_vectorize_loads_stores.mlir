// PASS: hlo-vectorize-loads-stores
// Extracts of a kernel buffer at base+0..V-1 (V a vector width) become one
// vector.transfer_read and V vector.extracts, also through affine.linearize_index.

// CHECK-LABEL: func.func @four_lanes
// CHECK-SAME: (%[[BUF:.*]]: memref<64xf32>, %[[B:.*]]: index)
// CHECK:   %[[T:.*]] = bufferization.to_tensor %[[BUF]]
// CHECK:   %[[V:.*]] = vector.transfer_read %[[T]][%[[B]]], %{{.*}} {in_bounds = [true]} : tensor<64xf32>, vector<4xf32>
// CHECK-DAG:   %[[L0:.*]] = vector.extract %[[V]][0] : f32 from vector<4xf32>
// CHECK-DAG:   %[[L1:.*]] = vector.extract %[[V]][1] : f32 from vector<4xf32>
// CHECK-DAG:   %[[L2:.*]] = vector.extract %[[V]][2] : f32 from vector<4xf32>
// CHECK-DAG:   %[[L3:.*]] = vector.extract %[[V]][3] : f32 from vector<4xf32>
// CHECK-NOT: tensor.extract
// CHECK:   return %[[L0]], %[[L1]], %[[L2]], %[[L3]]
func.func @four_lanes(%buf: memref<64xf32>, %b: index) -> (f32, f32, f32, f32) {
  %t = bufferization.to_tensor %buf restrict : memref<64xf32> to tensor<64xf32>
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %i1 = arith.addi %b, %c1 : index
  %i2 = arith.addi %b, %c2 : index
  %i3 = arith.addi %b, %c3 : index
  %x0 = tensor.extract %t[%b] : tensor<64xf32>
  %x1 = tensor.extract %t[%i1] : tensor<64xf32>
  %x2 = tensor.extract %t[%i2] : tensor<64xf32>
  %x3 = tensor.extract %t[%i3] : tensor<64xf32>
  return %x0, %x1, %x2, %x3 : f32, f32, f32, f32
}

// -----

// The last index of a linearization has stride 1: [r, c + k] are lanes of [r, c].
// CHECK-LABEL: func.func @linearized_lanes
// CHECK:   %[[LIN:.*]] = affine.linearize_index
// CHECK:   vector.transfer_read %{{.*}}[%[[LIN]]], %{{.*}} : tensor<64xf32>, vector<2xf32>
// CHECK-NOT: tensor.extract
func.func @linearized_lanes(%buf: memref<64xf32>, %r: index, %c: index) -> (f32, f32) {
  %t = bufferization.to_tensor %buf restrict : memref<64xf32> to tensor<64xf32>
  %c1 = arith.constant 1 : index
  %c_1 = arith.addi %c, %c1 : index
  %l0 = affine.linearize_index [%r, %c] by (4, 16) : index
  %l1 = affine.linearize_index [%r, %c_1] by (4, 16) : index
  %x0 = tensor.extract %t[%l0] : tensor<64xf32>
  %x1 = tensor.extract %t[%l1] : tensor<64xf32>
  return %x0, %x1 : f32, f32
}

// -----

// Left as they are: a group with a gap (0, 1, 3), and a tensor that is not a kernel
// buffer (work-group tiles are indexed per lane).
// CHECK-LABEL: func.func @not_vectorized
// CHECK-NOT: vector.transfer_read
// CHECK-COUNT-5: tensor.extract
// CHECK-NOT: vector.transfer_read
func.func @not_vectorized(%buf: memref<64xf32>, %tile: tensor<64xf32>, %b: index) -> (f32, f32, f32, f32, f32) {
  %t = bufferization.to_tensor %buf restrict : memref<64xf32> to tensor<64xf32>
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %i1 = arith.addi %b, %c1 : index
  %i3 = arith.addi %b, %c3 : index
  %x0 = tensor.extract %t[%b] : tensor<64xf32>
  %x1 = tensor.extract %t[%i1] : tensor<64xf32>
  %x3 = tensor.extract %t[%i3] : tensor<64xf32>
  %y0 = tensor.extract %tile[%b] : tensor<64xf32>
  %y1 = tensor.extract %tile[%i1] : tensor<64xf32>
  return %x0, %x1, %x3, %y0, %y1 : f32, f32, f32, f32, f32
}
