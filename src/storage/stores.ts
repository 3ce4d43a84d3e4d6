/** Each configured store's storage, made on first use: starting with five stores costs what one does. */
import type { Config } from "../config/config.ts";
import { storeConfig } from "../config/stores-config.ts";
import { createS3Storage } from "./s3-storage.ts";
import type { Storage } from "./types.ts";

/** The default store's storage and a getter for every store's, by name. */
export function createStoreStorages(config: Config): { storage: Storage; storageOf(name: string): Storage } {
  const made = new Map<string, Storage>();
  const storageOf = (name: string): Storage => {
    let storage = made.get(name);
    if (!storage) {
      const store = config.stores.find((s) => s.name === name) ?? config.stores[0];
      storage = createS3Storage(store ? storeConfig(config, store) : config);
      made.set(name, storage);
    }
    return storage;
  };
  return { storage: storageOf(config.stores[0]?.name ?? "default"), storageOf };
}
