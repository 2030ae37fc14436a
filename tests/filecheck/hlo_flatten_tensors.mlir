// PASS: hlo-flatten-tensors
// N-d extracts of an expanded 1-D kernel buffer become 1-D extracts at the
// linearized index; the expand_shape goes away.

// CHECK-LABEL: func.func @extract_2d
// CHECK-SAME: (%[[BUF:.*]]: memref<?xf32>, %[[I:.*]]: index, %[[J:.*]]: index)
// CHECK:   %[[FLAT:.*]] = bufferization.to_tensor
// CHECK-NOT: tensor.expand_shape
// CHECK:   %[[LIN:.*]] = affine.linearize_index{{( disjoint)?}} [%[[I]], %[[J]]] by (4, 16)
// CHECK:   %[[X:.*]] = tensor.extract %[[FLAT]][%[[LIN]]] : tensor<64xf32>
// CHECK:   return %[[X]]
func.func @extract_2d(%buf: memref<?xf32>, %i: index, %j: index) -> f32 {
  %view = memref.reinterpret_cast %buf to offset: [0], sizes: [64], strides: [1] : memref<?xf32> to memref<64xf32>
  %flat = bufferization.to_tensor %view restrict : memref<64xf32> to tensor<64xf32>
  %t = tensor.expand_shape %flat [[0, 1]] output_shape [4, 16] : tensor<64xf32> into tensor<4x16xf32>
  %x = tensor.extract %t[%i, %j] : tensor<4x16xf32>
  return %x : f32
}

// -----

// A dynamic dimension: its output_shape operand is the basis of the linearization.
// CHECK-LABEL: func.func @extract_dynamic
// CHECK-SAME: (%[[FLAT:.*]]: tensor<?xf32>, %[[N:.*]]: index, %[[I:.*]]: index, %[[J:.*]]: index)
// CHECK:   %[[LIN:.*]] = affine.linearize_index{{( disjoint)?}} [%[[I]], %[[J]]] by (%[[N]], 8)
// CHECK:   tensor.extract %[[FLAT]][%[[LIN]]] : tensor<?xf32>
func.func @extract_dynamic(%flat: tensor<?xf32>, %n: index, %i: index, %j: index) -> f32 {
  %t = tensor.expand_shape %flat [[0, 1]] output_shape [%n, 8] : tensor<?xf32> into tensor<?x8xf32>
  %x = tensor.extract %t[%i, %j] : tensor<?x8xf32>
  return %x : f32
}

// -----

// An extract of a tensor that is not a reshaped 1-D buffer stays as it is.
// CHECK-LABEL: func.func @extract_plain
// CHECK:   tensor.extract %{{.*}}[%{{.*}}, %{{.*}}] : tensor<4x16xf32>
func.func @extract_plain(%t: tensor<4x16xf32>, %i: index, %j: index) -> f32 {
  %x = tensor.extract %t[%i, %j] : tensor<4x16xf32>
  return %x : f32
}
