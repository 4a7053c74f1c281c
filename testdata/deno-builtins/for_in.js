// Sums an object's values with for-in and computed property reads, for
// MILLIS ms (default 500): most of the time goes to V8's builtins
// (ForInFilter, KeyedLoadIC_Megamorphic, ...), which run from Deno's
// stripped binary.
const object = {};
for (let i = 0; i < 100; i++) object['k' + i] = i;
const millis = Number(Deno.args[0] ?? 500);
let sum = 0;
const end = Date.now() + millis;
while (Date.now() < end) {
  for (const key in object) sum += object[key];
}
console.log(sum);
