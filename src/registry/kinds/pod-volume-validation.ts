// kube 1.32's ValidateVolumes / validateVolumeSource (pkg/apis/core/validation/
// validation.go) for a pod spec's volumes: a DNS-label name, unique; exactly one
// source, a second one named in kube's order (with kube's Go path names); the
// checks of the sources pods use (hostPath, secret, configMap, downwardAPI,
// projected, persistentVolumeClaim). As in kube, only a volume without errors can
// be mounted: a mount naming an invalid one is `Not found`.

import { isDNS1123Label } from '../../machinery/schema/object-meta.js';
import type { FieldError, JSONValue } from '../types.js';
import { duplicate, forbidden, invalid, required } from './field-errors.js';

type Obj = Record<string, JSONValue>;
const isObj = (v: JSONValue | undefined): v is Obj => v !== null && v !== undefined && typeof v === 'object' && !Array.isArray(v);

/** kube's order of the sources and the path each is named by when it is one too many (`cephFS`, and kube's `downwarAPI`) */
const SOURCES: [string, string][] = [
  ['emptyDir', 'emptyDir'], ['hostPath', 'hostPath'], ['gitRepo', 'gitRepo'], ['gcePersistentDisk', 'gcePersistentDisk'],
  ['awsElasticBlockStore', 'awsElasticBlockStore'], ['secret', 'secret'], ['nfs', 'nfs'], ['iscsi', 'iscsi'], ['glusterfs', 'glusterfs'],
  ['flocker', 'flocker'], ['persistentVolumeClaim', 'persistentVolumeClaim'], ['rbd', 'rbd'], ['cinder', 'cinder'], ['cephfs', 'cephFS'],
  ['quobyte', 'quobyte'], ['downwardAPI', 'downwarAPI'], ['fc', 'fc'], ['flexVolume', 'flexVolume'], ['configMap', 'configMap'],
  ['azureFile', 'azureFile'], ['vsphereVolume', 'vsphereVolume'], ['photonPersistentDisk', 'photonPersistentDisk'],
  ['portworxVolume', 'portworxVolume'], ['azureDisk', 'azureDisk'], ['storageos', 'storageos'], ['projected', 'projected'],
  ['scaleIO', 'scaleIO'], ['csi', 'csi'], ['ephemeral', 'ephemeral'], ['image', 'image'],
];
const ORDER = new Map(SOURCES.map(([k], i) => [k, i]));

const FILE_MODE = 'must be a number between 0 and 0777 (octal), both inclusive';
const badMode = (m: JSONValue | undefined): m is number => typeof m === 'number' && (m < 0 || m > 0o777);
const hasBackstep = (path: string): boolean => path.split('/').includes('..');

/** kube's ValidateLocalNonReservedPath: relative, no `..` element, not starting with `..` */
function validateLocalPath(path: string, at: string, errs: FieldError[]): void {
  if (path.startsWith('/')) errs.push(invalid(at, path, 'must be a relative path'));
  if (hasBackstep(path)) errs.push(invalid(at, path, "must not contain '..'"));
  else if (path.startsWith('..')) errs.push(invalid(at, path, "must not start with '..'"));
}

/** kube's validateKeyToPath for each of a secret's or configMap's items */
function validateItems(items: JSONValue | undefined, at: string, errs: FieldError[]): void {
  if (!Array.isArray(items)) return;
  items.forEach((kp, i) => {
    if (!isObj(kp)) return;
    const p = `${at}.items[${i}]`;
    if (typeof kp.key !== 'string' || kp.key === '') errs.push(required(`${p}.key`));
    const path = typeof kp.path === 'string' ? kp.path : '';
    if (path === '') errs.push(required(`${p}.path`));
    validateLocalPath(path, `${p}.path`, errs);
    if (badMode(kp.mode)) errs.push(invalid(`${p}.mode`, kp.mode, FILE_MODE));
  });
}

function validateSource(key: string, src: Obj, at: string, errs: FieldError[]): void {
  switch (key) {
    case 'hostPath': {
      const path = typeof src.path === 'string' ? src.path : '';
      if (path === '') errs.push(required(`${at}.path`));
      else if (hasBackstep(path)) errs.push(invalid(`${at}.path`, path, "must not contain '..'"));
      return;
    }
    case 'secret':
      if (typeof src.secretName !== 'string' || src.secretName === '') errs.push(required(`${at}.secretName`));
      if (badMode(src.defaultMode)) errs.push(invalid(`${at}.defaultMode`, src.defaultMode, FILE_MODE));
      validateItems(src.items, at, errs);
      return;
    case 'configMap':
      if (typeof src.name !== 'string' || src.name === '') errs.push(required(`${at}.name`));
      if (badMode(src.defaultMode)) errs.push(invalid(`${at}.defaultMode`, src.defaultMode, FILE_MODE));
      validateItems(src.items, at, errs);
      return;
    case 'downwardAPI':
    case 'projected':
      if (badMode(src.defaultMode)) errs.push(invalid(`${at}.defaultMode`, src.defaultMode, FILE_MODE));
      return;
    case 'persistentVolumeClaim':
      if (typeof src.claimName !== 'string' || src.claimName === '') errs.push(required(`${at}.claimName`));
      return;
  }
}

/** the volumes of the spec at `at` (`spec`): errors appended, the names that mounts may name returned */
export function validateVolumes(volumes: JSONValue | undefined, at: string, errs: FieldError[]): Set<string> {
  const valid = new Set<string>();
  if (!Array.isArray(volumes)) return valid;
  volumes.forEach((v, i) => {
    if (!isObj(v)) return;
    const before = errs.length;
    const p = `${at}.volumes[${i}]`;
    // the sources given, in kube's order: the first is validated, the others are one too many
    let first = -1;
    let extra: number[] | undefined;
    for (const k in v) {
      const idx = ORDER.get(k);
      if (idx === undefined || !isObj(v[k])) continue;
      if (first < 0) {
        first = idx;
        continue;
      }
      (extra ??= []).push(Math.max(idx, first));
      first = Math.min(idx, first);
    }
    if (first < 0) errs.push(required(p, 'must specify a volume type'));
    else {
      const [key] = SOURCES[first]!; // first indexes SOURCES (from ORDER)
      validateSource(key, v[key] as Obj, `${p}.${key}`, errs);
      if (extra) for (const idx of extra.sort((a, b) => a - b)) errs.push(forbidden(`${p}.${SOURCES[idx]![1]}`, 'may not specify more than 1 volume type'));
    }
    const name = typeof v.name === 'string' ? v.name : '';
    if (name === '') errs.push(required(`${p}.name`));
    else for (const m of isDNS1123Label(name)) errs.push(invalid(`${p}.name`, name, m));
    if (valid.has(name)) errs.push(duplicate(`${p}.name`, name));
    if (errs.length === before) valid.add(name);
  });
  return valid;
}
