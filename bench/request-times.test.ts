import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatTimings, serverTimingsOf, timingsBetween, timingsOf } from './request-times.js';

const server = (patch: number) => `# HELP apiserver_request_duration_seconds ...
apiserver_request_duration_seconds_bucket{component="apiserver",group="",resource="secrets",scope="resource",subresource="",verb="APPLY",version="v1",le="0.05"} 3
apiserver_request_duration_seconds_sum{component="apiserver",group="",resource="secrets",scope="resource",subresource="",verb="APPLY",version="v1"} ${patch}
apiserver_request_duration_seconds_count{component="apiserver",group="",resource="secrets",scope="resource",subresource="",verb="APPLY",version="v1"} 4
apiserver_request_duration_seconds_sum{component="apiserver",group="apps",resource="deployments",scope="namespace",subresource="",verb="LIST",version="v1"} 0.5
apiserver_request_duration_seconds_count{component="apiserver",group="apps",resource="deployments",scope="namespace",subresource="",verb="LIST",version="v1"} 2
apiserver_request_duration_seconds_sum{component="apiserver",group="",resource="secrets",scope="resource",subresource="",verb="WATCH",version="v1"} 900
apiserver_request_duration_seconds_count{component="apiserver",group="",resource="secrets",scope="resource",subresource="",verb="WATCH",version="v1"} 1
apiserver_request_duration_seconds_sum{component="apiserver",group="coordination.k8s.io",resource="leases",scope="resource",subresource="",verb="PUT",version="v1"} 7
apiserver_request_duration_seconds_count{component="apiserver",group="coordination.k8s.io",resource="leases",scope="resource",subresource="",verb="PUT",version="v1"} 70
apiserver_request_duration_seconds_sum{component="apiserver",group="",resource="",scope="",subresource="/healthz",verb="GET",version=""} 3
apiserver_request_duration_seconds_count{component="apiserver",group="",resource="",scope="",subresource="/healthz",verb="GET",version=""} 30
`;

describe('request times', () => {
  it("sums the apiserver's by the client's verb, without watches, leases and non-resource paths", () => {
    assert.deepEqual(
      serverTimingsOf(server(0.2)),
      new Map([
        ['PATCH', { seconds: 0.2, count: 4 }],
        ['GET', { seconds: 0.5, count: 2 }],
      ]),
    );
  });

  it("reads a client's histogram and takes the difference over a phase", () => {
    const client = (sum: number, count: number) =>
      `rest_client_request_duration_seconds_bucket{verb="PATCH",le="0.005"} 0\nrest_client_request_duration_seconds_sum{verb="PATCH"} ${sum}\nrest_client_request_duration_seconds_count{verb="PATCH"} ${count}\n`;
    const phase = timingsBetween(
      timingsOf(client(1.5, 30), 'rest_client_request_duration_seconds'),
      timingsOf(client(0.5, 10), 'rest_client_request_duration_seconds'),
    );
    assert.deepEqual(phase, new Map([['PATCH', { seconds: 1, count: 20 }]]));
    const apiserver = timingsBetween(serverTimingsOf(server(0.3)), serverTimingsOf(server(0.2)));
    // no new LIST in the phase: left out; PATCH's sum grew by 0.1 s with no new request counted
    assert.deepEqual(apiserver, new Map());
    assert.equal(
      formatTimings(phase, serverTimingsOf(server(0.2))),
      'GET – / 250.0 ms (0 / 2); PATCH 50.0 / 50.0 ms (20 / 4)',
    );
  });
});
