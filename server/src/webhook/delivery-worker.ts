/**
 * The webhook worker (docs/server.md, "Webhooks"): parses a delivery and checks its signature
 * (check-delivery.ts) off the request thread, one delivery at a time.
 */
import { parentPort } from 'node:worker_threads';
import { checkDelivery, type DeliveryCandidate, type DeliveryCheck } from './check-delivery.js';

export interface ToDeliveryWorker {
  id: number;
  body: Uint8Array;
  signature: string;
  candidates: DeliveryCandidate[];
  /** The server's secret key, which opens the candidates' sealed secrets. */
  key: Uint8Array;
}

export interface FromDeliveryWorker {
  id: number;
  check: DeliveryCheck;
}

const port = parentPort;
if (!port) throw new Error('delivery-worker runs as a worker thread');
port.on('message', (task: ToDeliveryWorker) => {
  const reply: FromDeliveryWorker = {
    id: task.id,
    check: checkDelivery(task.body, task.signature, task.candidates, task.key),
  };
  port.postMessage(reply);
});
