module @dynamic_batch {
  func.func @main(%arg0: !torch.vtensor<[?,8],f32>, %arg1: !torch.vtensor<[?,8],f32>) -> !torch.vtensor<[?,8],f32> attributes {torch.assume_strict_symbolic_shapes} {
    %0 = torch.vtensor.literal(dense_resource<torch_tensor_8_8_torch.float32> : tensor<8x8xf32>) : !torch.vtensor<[8,8],f32>
    %1 = torch.vtensor.literal(dense_resource<torch_tensor_8_torch.float32> : tensor<8xf32>) : !torch.vtensor<[8],f32>
    %2 = torch.aten.linear %arg1, %0, %1 : !torch.vtensor<[?,8],f32>, !torch.vtensor<[8,8],f32>, !torch.vtensor<[8],f32> -> !torch.vtensor<[?,8],f32>
    %3 = torch.aten.tanh %2 : !torch.vtensor<[?,8],f32> -> !torch.vtensor<[?,8],f32>
    %4 = torch.vtensor.literal(dense_resource<torch_tensor_8_8_torch.float32_1> : tensor<8x8xf32>) : !torch.vtensor<[8,8],f32>
    %5 = torch.vtensor.literal(dense_resource<torch_tensor_8_torch.float32_1> : tensor<8xf32>) : !torch.vtensor<[8],f32>
    %6 = torch.aten.linear %arg0, %4, %5 : !torch.vtensor<[?,8],f32>, !torch.vtensor<[8,8],f32>, !torch.vtensor<[8],f32> -> !torch.vtensor<[?,8],f32>
    %7 = torch.aten.mul.Tensor %6, %3 : !torch.vtensor<[?,8],f32>, !torch.vtensor<[?,8],f32> -> !torch.vtensor<[?,8],f32>
    return %7 : !torch.vtensor<[?,8],f32>
  }
}

{-#
  dialect_resources: {
    builtin: {
      torch_tensor_8_8_torch.float32: "0x04000000CC79B3BE95CC8EBE0D111BBEB942ABBE5C6DA4BC42419FBE16DA443E0A75303E8CBC883D4B6B8C3E14D40DBDB8DA583ED28A7DBE3BB08EBDBB67A1BE6326EBBC0BE36ABE1F9FA23E4E7C7B3E63B6873EC4C6D63D97894EBE71AAA23EB2A2B0BED01167BE4D1E62BEA11116BE0C61903DC81E89BE75758BBE42242DBED3F75C3E9B9082BE065BA2BE17E49CBE642732BEFD3FBEBD2774B3BE838029BE62DFDE3B47B86E3D1E9B4FBD063324BD77886BBE7E79393E0D6FAEBD2B8877BE1D60AEBDB3504ABD1B5FA73EECAD3C3ECD2F12BECB734DBD14F69F3E4296683E9589B43D84DE01BE3C9F963EBC1B1B3E333E21BE4776803E896DCE3CC1DF85BE137820BE",
      torch_tensor_8_torch.float32: "0x04000000919287BEE2ED95BE4E9C0D3C56B981BEEFF2403E98E9213E93C19B3D5E27953E",
      torch_tensor_8_8_torch.float32_1: "0x040000005F3A24BE0EC3AC3B59765E3E6049FA3DE1742F3D135E973E6905A53D4597733EBE009CBE7EFC9BBE1463A3BE00F4A33CB99D993E01F99DBE200E103E04BF9FBE119970BEB6E9F6BDE83713BE92DED53D8DC997BE1902B33E611E533DE76BFC3D0A9074BE82CB473E5211A9BD1E2134BE9752763D01AD163EB05C193DA853FDBDF1A3863D0D150CBE7925F5BD518106BE3AB3573E460E7DBE96341D3E67A63B3E598E70BE7E7E89BE091871BE072199BEC1FA973ED88F9F3E7C334ABD09BDA93E4D1ACD3DCE94B1BE08A1A5BEF8D12EBE5C90B4BE201726BE57D5C33D68E701BCA63587BD81E4B13CFB7FA53E3FC17B3B8709363E3686AEBD3FCC87BEEFA28D3D",
      torch_tensor_8_torch.float32_1: "0x040000005ABB263EA182523E8F51AABE20C43FBD346AAEBEF9ED8D3B42C37F3C5FA6EB3D"
    }
  }
#-}
