import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { buildRpcContract, renderProto } from '../../api/rpc-contract.js';
import { defineSpec, rpcBindings, type OperationSpec } from '../../api/spec.js';
import { SPECS } from '../../api/index.js';
import { PROTO_PATH } from '../helpers/grpc-client.js';

const fake = (over: Partial<OperationSpec>): OperationSpec =>
  defineSpec({ id: 'fake', group: 'fake', summary: 'A fake operation', method: 'GET', path: '/v1/fake', access: { kind: 'read' }, ...over });

describe('proto/svc/v1/control_center.proto', () => {
  it('is exactly what the operation table generates', () => {
    const generated = renderProto(buildRpcContract(SPECS));
    const checkedIn = fs.readFileSync(PROTO_PATH, 'utf8');
    expect(checkedIn === generated, 'proto/svc/v1/control_center.proto is stale: run `npm run proto:generate` and commit the result').toBe(true);
  });

  it('has one RPC per table entry with an rpc, plus Health and the two streams', () => {
    const proto = fs.readFileSync(PROTO_PATH, 'utf8');
    const rpcs = [...proto.matchAll(/^\s*rpc (\w+)\((\w+)\) returns \((stream )?(\w+)\);$/gm)];
    // An operation serves one RPC per binding: `rpc`, then each of `moreRpcs`.
    const withRpc = SPECS.flatMap((o) => rpcBindings(o));
    expect(rpcs).toHaveLength(withRpc.length + 3);
    for (const op of withRpc) {
      const line = rpcs.find((m) => m[1] === op.rpc!.name);
      expect(line, op.rpc!.name).toBeDefined();
      expect(line![2]).toBe(op.rpc!.request);
      expect(line![4]).toBe('JsonResponse');
    }
    expect(proto).toContain('rpc Health(Empty) returns (HealthResponse);');
    expect(proto).toContain('rpc StreamEvents(StreamEventsRequest) returns (stream PlatformEventFrame);');
    expect(proto).toContain('rpc StreamTelemetry(StreamTelemetryRequest) returns (stream TelemetryFrame);');
    expect(proto).toMatch(/^package svc\.v1;$/m);
    expect(proto).toMatch(/^service ControlCenter \{$/m);
  });

  it('moreRpcs: one operation serves further RPCs, each with its own request message; a name used twice is refused', () => {
    const list = fake({ id: 'listThings', path: '/v1/things', rpc: { name: 'ListThings', request: 'Empty' }, moreRpcs: [{ name: 'GetThing', request: 'QueryRequest' }] });
    const contract = buildRpcContract([...SPECS, list]);
    const mine = contract.rpcs.filter((r) => r.operation?.id === 'listThings');
    expect(mine.map((r) => [r.name, r.request, r.operation!.rpc!.name, r.operation!.path])).toEqual([
      ['ListThings', 'Empty', 'ListThings', '/v1/things'],
      ['GetThing', 'QueryRequest', 'GetThing', '/v1/things'],
    ]);
    expect(renderProto(contract)).toContain('rpc GetThing(QueryRequest) returns (JsonResponse);');
    expect(rpcBindings(fake({ moreRpcs: [{ name: 'X', request: 'Empty' }] }))).toEqual([]);
    const clash = fake({ id: 'clash', path: '/v1/clash', rpc: { name: 'Clash', request: 'Empty' }, moreRpcs: [{ name: 'ListThings', request: 'Empty' }] });
    expect(() => buildRpcContract([...SPECS, list, clash])).toThrow(/rpc ListThings is declared twice/);
    // The deployment profile route is one such operation (docs/operations.md).
    const profiles = buildRpcContract(SPECS).rpcs.filter((r) => r.operation?.id === 'listDeploymentProfiles').map((r) => `${r.name}(${r.request})`);
    expect(profiles).toEqual(['ListDeploymentProfiles(Empty)', 'GetDeploymentProfile(QueryRequest)']);
  });

  it('is generic: a new operation with an rpc becomes an RPC without touching the generator', () => {
    const table = [
      ...SPECS,
      fake({ id: 'getThing', path: '/v1/things/{id}', rpc: { name: 'GetThing', request: 'EntityIdRequest' }, jsonRpc: true }),
      fake({ id: 'tagThing', method: 'POST', path: '/v1/things/{id}/tags', access: { kind: 'action', action: 'Provision' }, rpc: { name: 'TagThing', request: 'EntityBodyRequest' } }),
    ];
    const proto = renderProto(buildRpcContract(table));
    expect(proto).toContain('rpc GetThing(EntityIdRequest) returns (JsonResponse);');
    expect(proto).toContain('// POST /v1/things/{id}/tags · role with Provision · audited. A fake operation');
    expect(buildRpcContract(table).rpcs).toHaveLength(buildRpcContract(SPECS).rpcs.length + 2);
  });

  it('refuses declarations it could not serve', () => {
    expect(() => buildRpcContract([fake({ path: '/v1/a/{x}/b/{y}', rpc: { name: 'Two', request: 'DeviceIdRequest' } })])).toThrow(/cannot supply path parameter/);
    expect(() => buildRpcContract([fake({ path: '/v1/a/{x}', rpc: { name: 'NoId', request: 'Empty' } })])).toThrow(/cannot supply path parameter/);
    expect(() => buildRpcContract([fake({ rpc: { name: 'Dup', request: 'Empty' } }), fake({ id: 'other', rpc: { name: 'Dup', request: 'Empty' } })])).toThrow(/declared twice/);
    expect(() => buildRpcContract([fake({ rpc: { name: 'Health', request: 'Empty' } })])).toThrow(/declared twice/);
    expect(() => buildRpcContract([fake({ rpc: { name: 'StreamEvents', request: 'Empty' } })])).toThrow(/reserved/);
    expect(() => buildRpcContract([fake({ rpc: { name: 'lower_case', request: 'Empty' } })])).toThrow(/PascalCase/);
    expect(() => buildRpcContract([fake({ path: '/v1/a/{id}', rpc: { name: 'B', request: 'QueryRequest', bodyParams: { id: 'x' } } })])).toThrow(/body_json/);
  });
});
