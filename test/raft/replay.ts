// Replays a counterexample printed by raft-safety.property.test.ts:
//   npx tsx test/raft/replay.ts <cluster size> '<counterexample JSON>'
import { runSchedule, type Action, type Variant } from './schedule.js';

const size = Number(process.argv[2]);
const [seed, actions, variant] = JSON.parse(process.argv[3]!) as [number, Action[], Variant | undefined];
runSchedule(size, seed, actions, variant);
console.log('schedule passed');
