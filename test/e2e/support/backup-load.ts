import { postBatch, purchaseBatch, type LiveApp } from '../../reliability/support/live-api.js';

/** A batch order the server answered, and when (this process's clock). */
export interface AnsweredOrder {
  channelOrderId: string;
  answeredAt: number;
}

export interface OrderLoad {
  answered: AnsweredOrder[];
  /** Resolves once at least `count` batches have been answered. */
  until(count: number): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Batch orders through the order API, `lanes` at a time, until stopped: the writes a backup is
 * taken under. Every answered batch is recorded; a refused one fails the load.
 */
export function startOrderLoad(base: string, app: LiveApp, token: string, lanes = 2): OrderLoad {
  const answered: AnsweredOrder[] = [];
  let stopped = false;
  let failure: Error | undefined;
  const lane = async () => {
    while (!stopped) {
      const { body } = purchaseBatch(app, { orders: 2, assets: 2 });
      const answer = await postBatch(base, app, token, body, 60_000);
      if (answer.code !== 0) throw new Error(`batch refused: ${answer.body}`);
      answered.push({ channelOrderId: body.channelOrderId as string, answeredAt: Date.now() });
    }
  };
  const running = Promise.all(Array.from({ length: lanes }, lane)).catch((error: Error) => {
    failure = error;
  });
  return {
    answered,
    async until(count) {
      while (answered.length < count) {
        if (failure !== undefined) throw failure;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
    async stop() {
      stopped = true;
      await running;
      if (failure !== undefined) throw failure;
    },
  };
}
