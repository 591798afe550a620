// Preloaded into the local Azurite (NODE_OPTIONS --require, devhost/azurite.py): finding an entity by its keys,
// or a partition's entities by a query, costs what it costs in Table Storage, not the size of the partition or the
// table. Hand-written: Azurite offers no setting for either; written against the pinned Azurite 3.35.0.
//
// Azurite keeps each table in a LokiJS collection with one index on PartitionKey and one on RowKey.
// - By key: every point read, insert, update, delete and upsert (inside a $batch too) is findOne({PartitionKey,
//   RowKey}). LokiJS narrows by the first key's index only and compares the second along every row it kept: the
//   whole partition, and a partition holding a collection's claims and history grows with each execution. Here the
//   RowKey index narrows first (a RowKey is shared by a few rows at most: a job's name across collections), then
//   both keys are compared exactly.
// - By query: Azurite runs the filter over every row of the table. A filter whose top-level conjuncts include
//   `PartitionKey eq '...'` (as Azurite's own parser reads it) matches rows of that partition only, so the query
//   starts from that partition (the PartitionKey index) and runs the whole filter over it: the same rows.
// - Replaced: Azurite replaces an entity (an update, an upsert of one that exists, inside a $batch too) by removing
//   it and inserting the new one, and LokiJS's remove renumbers every later row in both key indexes: a pass over the
//   whole table per replace, the commonest write of a run. A replaced entity keeps both its keys, so here it takes
//   the old one's place (its slot in the table and so in both indexes, which order slots by key); every check of
//   Azurite's update (its ETag, the rollback a failed $batch makes) runs as before.
"use strict";
const path = require("path");

const beside = { paths: [path.dirname(process.argv[1] || ".")] };
let loki;
let azurite;
try {
  azurite = path.dirname(require.resolve("azurite/package.json", beside));
  loki = require(require.resolve("lokijs", { paths: [azurite] })); // the LokiJS Azurite itself loads
} catch (error) {
  process.stderr.write(`azurite_lookups: Azurite's modules not found beside ${process.argv[1]}; left as they are\n`);
}

if (loki) {
  const findOne = loki.Collection.prototype.findOne;
  loki.Collection.prototype.findOne = function (query) {
    const keyed =
      query &&
      !this.cloneObjects &&
      this.binaryIndices &&
      this.binaryIndices.RowKey &&
      typeof query.PartitionKey === "string" &&
      typeof query.RowKey === "string" &&
      Object.keys(query).length === 2;
    if (!keyed) {
      return findOne.call(this, query);
    }
    for (const doc of this.chain().find({ RowKey: query.RowKey }).data()) {
      // Both compared exactly: the index compares keys that read as numbers as numbers ("1" and "01" alike).
      if (doc.RowKey === query.RowKey && doc.PartitionKey === query.PartitionKey) {
        return doc;
      }
    }
    return null;
  };
}

if (azurite) {
  const table = (name) => require(path.join(azurite, "dist", "src", "table", "persistence", name)).default;
  const node = (name) => table(path.join("QueryInterpreter", "QueryNodes", name));
  const Store = table("LokiTableMetadataStore");
  const parseQuery = table(path.join("QueryInterpreter", "QueryParser"));
  const [And, Equals, Identifier, Constant] = ["AndNode", "EqualsNode", "IdentifierNode", "ConstantNode"].map(node);

  // The partition every row the filter matches is in, when one of its top-level conjuncts names it; else undefined.
  const partitionOf = (tree) => {
    if (tree instanceof And) {
      const left = partitionOf(tree.left);
      return left !== undefined ? left : partitionOf(tree.right);
    }
    const named =
      tree instanceof Equals &&
      tree.left instanceof Identifier &&
      tree.left.identifier === "PartitionKey" &&
      tree.right instanceof Constant &&
      typeof tree.right.value === "string";
    return named ? tree.right.value : undefined;
  };

  // Azurite's store with every collection it looks up seen through `view` (both patches below run Azurite's own
  // method over such a store, so its checks stay its own).
  const seenThrough = (store, view) => {
    const seen = Object.create(store);
    seen.getEntityCollection = (...where) => view(store.getEntityCollection(...where));
    return seen;
  };

  const queryTableEntities = Store.prototype.queryTableEntities;
  Store.prototype.queryTableEntities = function (context, account, tableName, queryOptions, ...rest) {
    let partition;
    try {
      const filter = queryOptions && queryOptions.filter;
      partition = filter ? partitionOf(parseQuery(filter)) : undefined;
    } catch (error) {
      partition = undefined; // Azurite's own query answers the malformed filter as it does
    }
    if (partition === undefined) {
      return queryTableEntities.call(this, context, account, tableName, queryOptions, ...rest);
    }
    // Azurite's query, over a collection whose chain starts from the partition (the index narrows by loose
    // comparison, a superset; the filter then decides exactly).
    const store = seenThrough(this, (collection) => {
      const narrowed = Object.create(collection);
      narrowed.chain = () => collection.chain().find({ PartitionKey: partition });
      return narrowed;
    });
    return queryTableEntities.call(store, context, account, tableName, queryOptions, ...rest);
  };

  // A collection where a row can take another's slot without LokiJS's bookkeeping: no copies, unique indexes,
  // views, change log or incremental persistence, and no index but the two keys'.
  const inPlace = (collection) =>
    !collection.cloneObjects &&
    !collection.transactional &&
    !collection.isIncremental &&
    collection.disableChangesApi !== false &&
    collection.uniqueNames.length === 0 &&
    collection.DynamicViews.length === 0 &&
    Object.keys(collection.binaryIndices).every((key) => key === "PartitionKey" || key === "RowKey");

  const replaced = (collection, old, entity) => {
    const sameKeys = old.PartitionKey === entity.PartitionKey && old.RowKey === entity.RowKey;
    const found = sameKeys && collection.get(old.$loki, true);
    if (!found || found[0] !== old) {
      collection.remove(old);
      return collection.insert(entity);
    }
    entity.$loki = old.$loki;
    entity.meta = { ...old.meta, revision: (old.meta.revision || 0) + 1, updated: Date.now() };
    collection.data[found[1]] = entity;
    collection.dirty = true; // what LokiJS's own writes set, so a persisted Azurite saves it
    return entity;
  };

  // Azurite's update calls findOne, remove and insert on its collection: the remove is held, and the insert that
  // follows takes the removed row's slot.
  const replacing = (collection) => {
    if (!inPlace(collection)) {
      return collection;
    }
    let removed = null;
    return {
      findOne: (query) => collection.findOne(query),
      remove: (doc) => {
        removed = doc;
      },
      insert: (doc) => (removed ? replaced(collection, removed, doc) : collection.insert(doc)),
    };
  };

  const updateTableEntity = Store.prototype.updateTableEntity;
  Store.prototype.updateTableEntity = function (...args) {
    return updateTableEntity.call(seenThrough(this, replacing), ...args);
  };
}
