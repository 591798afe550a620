// Preloaded into the local Azurite (NODE_OPTIONS --require, devhost/azurite.py): an entity looked up by its key
// costs what it costs in Table Storage, not the size of its partition.
//
// Azurite keeps each table in a LokiJS collection with one index on PartitionKey and one on RowKey, and finds an
// entity (every point read, insert, update, delete and upsert, inside a $batch too) by findOne({PartitionKey,
// RowKey}). LokiJS narrows by the first key's index only and then compares the second along every row it kept: the
// whole partition. A partition holding a collection's claims and history grows with each execution, so the local
// host paid more per execution the longer it ran, which the service, which looks an entity up by its key, does not.
// Here the RowKey index narrows first (a RowKey is shared by a few rows at most: a job's name across collections),
// then the PartitionKey is compared: the same answer, the one entity with both keys. Hand-written: Azurite offers no
// setting for it.
"use strict";
const path = require("path");

let loki;
try {
  loki = require(require.resolve("lokijs", { paths: [path.dirname(process.argv[1] || ".")] }));
} catch (error) {
  process.stderr.write(`azurite_lookups: lokijs not found beside ${process.argv[1]}; lookups left as they are\n`);
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
    const found = this.chain().find({ RowKey: query.RowKey }).data();
    for (const doc of found) {
      // Both compared exactly: the index compares keys that read as numbers as numbers ("1" and "01" alike).
      if (doc.RowKey === query.RowKey && doc.PartitionKey === query.PartitionKey) {
        return doc;
      }
    }
    return null;
  };
}
