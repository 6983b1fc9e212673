import protobuf from 'protobufjs';
import type { ServiceDefinition } from 'nice-grpc';
import { renderProto, type RpcContract } from '../../../api/rpc-contract.js';

/**
 * The nice-grpc service definition of a contract: the contract is rendered to `.proto` text (the
 * very text that is checked in) and parsed by protobufjs, whose message types encode and decode on
 * the wire. Field names stay snake_case, as in the `.proto`.
 */
export function buildServiceDefinition(contract: RpcContract): ServiceDefinition {
  const { root } = protobuf.parse(renderProto(contract), { keepCase: true });
  const type = (name: string) => root.lookupType(`${contract.package}.${name}`);
  const definition: ServiceDefinition = {};
  for (const rpc of contract.rpcs) {
    const req = type(rpc.request);
    const res = type(rpc.response);
    definition[rpc.name] = {
      path: `/${contract.package}.${contract.service}/${rpc.name}`,
      requestStream: false,
      responseStream: rpc.serverStream,
      requestSerialize: (value: object) => req.encode(req.fromObject(value)).finish(),
      // Defaults on, so absent strings read as "" and absent lists as []; 64-bit numbers as numbers.
      requestDeserialize: (bytes: Uint8Array) => req.toObject(req.decode(bytes), { defaults: true, longs: Number }),
      responseSerialize: (value: object) => res.encode(res.fromObject(value)).finish(),
      responseDeserialize: (bytes: Uint8Array) => res.toObject(res.decode(bytes), { defaults: true, longs: Number }),
      options: rpc.operation && rpc.operation.method === 'GET' ? { idempotencyLevel: 'NO_SIDE_EFFECTS' } : {},
    };
  }
  return definition;
}
