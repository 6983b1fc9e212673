import descriptorPb from 'google-protobuf/google/protobuf/descriptor_pb.js';
import type { ProtoScalar, RpcContract } from '../../../api/rpc-contract.js';
import { PROTO_FILE } from '../../../api/versions.js';

const { FileDescriptorProto, FileDescriptorSet, DescriptorProto, FieldDescriptorProto, ServiceDescriptorProto, MethodDescriptorProto } = descriptorPb;

const SCALAR: Record<ProtoScalar, descriptorPb.FieldDescriptorProto.Type> = {
  string: FieldDescriptorProto.Type.TYPE_STRING,
  uint64: FieldDescriptorProto.Type.TYPE_UINT64,
  bool: FieldDescriptorProto.Type.TYPE_BOOL,
};

/**
 * The encoded `google.protobuf.FileDescriptorSet` of the contract, for server reflection: one file
 * named like the checked-in `.proto` (`svc/v1/control_center.proto`), with fully qualified type names
 * so reflection clients (grpcurl, Postman, evans) can resolve every method without the file.
 */
export function encodeDescriptorSet(contract: RpcContract): Uint8Array {
  const file = new FileDescriptorProto();
  file.setName(PROTO_FILE.replace(/^proto\//, ''));
  file.setPackage(contract.package);
  file.setSyntax('proto3');
  for (const m of contract.messages) {
    const msg = new DescriptorProto();
    msg.setName(m.name);
    for (const f of m.fields) {
      const field = new FieldDescriptorProto();
      field.setName(f.name);
      field.setJsonName(f.name.replace(/_([a-z])/g, (_s, c: string) => c.toUpperCase()));
      field.setNumber(f.number);
      field.setType(SCALAR[f.type]);
      field.setLabel(f.repeated ? FieldDescriptorProto.Label.LABEL_REPEATED : FieldDescriptorProto.Label.LABEL_OPTIONAL);
      msg.addField(field);
    }
    file.addMessageType(msg);
  }
  const service = new ServiceDescriptorProto();
  service.setName(contract.service);
  for (const r of contract.rpcs) {
    const method = new MethodDescriptorProto();
    method.setName(r.name);
    method.setInputType(`.${contract.package}.${r.request}`);
    method.setOutputType(`.${contract.package}.${r.response}`);
    if (r.serverStream) method.setServerStreaming(true);
    service.addMethod(method);
  }
  file.addService(service);
  const set = new FileDescriptorSet();
  set.addFile(file);
  return set.serializeBinary();
}
